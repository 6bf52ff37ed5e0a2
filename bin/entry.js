// Which code the `skillopt` command runs: the compiled and bundled JavaScript in dist/bundle/
// (what the package ships, run by plain node), or, in a checkout whose sources changed since the last build (or
// that was never built), the TypeScript sources through tsx. Plain JavaScript: it runs before
// anything can load TypeScript.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Written by the build when it is complete; its modification time is when the build started. */
export const BUILD_STAMP = path.join('dist', '.build-stamp');

/** The newest modification time (ms) of the files under `dir`. */
function newestUnder(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestUnder(file) : fs.statSync(file).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

/**
 * Whether dist/ holds a complete build of the sources under `root`. Without sources (an
 * installed package) a complete build is current.
 */
export function buildIsCurrent(root) {
  let built;
  try {
    built = fs.statSync(path.join(root, BUILD_STAMP)).mtimeMs;
  } catch {
    return false;
  }
  const sources = path.join(root, 'src');
  return !fs.existsSync(sources) || newestUnder(sources) <= built;
}

/** The module holding `main()` for the package at `root`, and whether it is the compiled one. */
export function entryOf(root) {
  if (buildIsCurrent(root)) return { url: pathToFileURL(path.join(root, 'dist/bundle/main.js')).href, compiled: true };
  const source = path.join(root, 'src/cli/main.ts');
  if (!fs.existsSync(source))
    throw new Error(
      `${path.join(root, 'dist')} holds no complete build and there are no sources: reinstall the package`,
    );
  return { url: pathToFileURL(source).href, compiled: false };
}
