// The command line as a few files: the compiled CLI (dist/cli/main.js) and the packages it
// imports bundled by esbuild into dist/bundle/, one chunk per part that loads lazily (a command,
// a provider SDK, the dashboard). Loading ~1,000 small modules took most of the time before the
// first model call. The library (dist/index.js) stays unbundled.
//
// A module's location is kept: import.meta.url and import.meta.dirname of a compiled module are
// rewritten to name its file in dist/, so the prompts, configs, dashboard files, Python scripts
// and workers it finds relative to itself are found as before, and createRequire resolves
// packages from the same place.
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';

/**
 * Packages loaded as they are, not bundled: native code (better-sqlite3), files read from beside
 * their own code (bullmq's Lua scripts), requires esbuild cannot follow (jsonc-parser's UMD), a
 * module loader (tsx). Those the code loads through createRequire are not bundled either.
 */
const EXTERNAL = ['better-sqlite3', 'bullmq', 'ioredis', 'jsonc-parser', 'tsx', 'tsx/*'];

/** Where the bundle goes under dist/ (bin/entry.js runs its main.js), and the file listing which modules each of its files holds (test/cli/startup.test.ts reads it). */
const BUNDLE_DIR = 'bundle';
const BUNDLE_INPUTS = 'inputs.json';

/** import.meta of a dist/ module, rewritten to name that module from the bundle's directory. */
function locationOf(file, outdir) {
  const rel = path.relative(outdir, file).split(path.sep).join('/');
  const relDir = path.relative(outdir, path.dirname(file)).split(path.sep).join('/');
  return {
    url: `new URL(${JSON.stringify(rel)}, import.meta.url).href`,
    dirname: `(import.meta.dirname + ${JSON.stringify(`/${relDir}`)})`,
    filename: `(import.meta.dirname + ${JSON.stringify(`/${rel}`)})`,
  };
}

const keepLocation = (dist, outdir) => ({
  name: 'keep-module-location',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, (args) => {
      if (!args.path.startsWith(dist + path.sep)) return undefined;
      const where = locationOf(args.path, outdir);
      const contents = fs.readFileSync(args.path, 'utf8').replace(/\bimport\.meta(?:\.(\w+))?/g, (whole, prop) => {
        if (!(prop in where))
          throw new Error(
            `${args.path}: ${whole} has no rewrite for the bundle (only import.meta.url, .dirname and .filename)`,
          );
        return where[prop];
      });
      return { contents, loader: 'js' };
    });
  },
});

/** Bundles dist/cli/main.js into dist/bundle/main.js and its chunks. */
export async function bundleCli(dist) {
  const outdir = path.join(dist, BUNDLE_DIR);
  const result = await esbuild.build({
    entryPoints: { main: path.join(dist, 'cli/main.js') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    chunkNames: '[name]-[hash]',
    // CommonJS packages in an ES module bundle call require for Node's own modules.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    plugins: [keepLocation(dist, outdir)],
    metafile: true,
    logLevel: 'warning',
  });
  const inputs = {};
  const root = path.dirname(dist);
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    inputs[path.basename(file)] = Object.keys(output.inputs).map((i) =>
      path.relative(root, path.resolve(i)).split(path.sep).join('/'),
    );
  }
  fs.writeFileSync(path.join(outdir, BUNDLE_INPUTS), `${JSON.stringify(inputs)}\n`);
}
