import fs from 'node:fs';
import path from 'node:path';

/**
 * A path from a config: absolute as is; a relative one is looked up in the working directory
 * first (as the original does), then next to the config file.
 */
export function resolveConfigPath(p: string, configDir: string): string {
  if (!p || path.isAbsolute(p)) return p;
  const fromCwd = path.resolve(p);
  if (fs.existsSync(fromCwd)) return fromCwd;
  const fromConfig = path.resolve(configDir, p);
  return fs.existsSync(fromConfig) ? fromConfig : fromCwd;
}

/** Where `resolveConfigPath` looks for a path, in order. */
export function configPathCandidates(p: string, configDir: string): string[] {
  if (!p || path.isAbsolute(p)) return [p];
  return [...new Set([path.resolve(p), path.resolve(configDir, p)])];
}

/** The outermost directory of `dir` that does not exist yet (what creating `dir` creates). */
export function firstMissing(dir: string): string | undefined {
  let missing: string | undefined;
  for (let d = dir; !fs.existsSync(d); d = path.dirname(d)) {
    missing = d;
    if (path.dirname(d) === d) break;
  }
  return missing;
}
