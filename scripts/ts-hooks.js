// The module hooks of scripts/ts-loader.js (they run on the loader thread): a .ts file is loaded
// as the JavaScript esbuild makes of it, from the cache when an earlier process made it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const ESBUILD_VERSION = require('esbuild/package.json').version;
/** What the compiled code depends on besides the source: a change here makes new cache entries. */
const OPTIONS = { loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline', sourcesContent: false };
const CACHE = path.join(root, 'node_modules', '.cache', 'skillopt-ts');
const SALT = JSON.stringify([ESBUILD_VERSION, OPTIONS]);

let esbuild;

/** The JavaScript of `file` (whose text is `source`), compiled now or by an earlier process. */
function compiled(file, source) {
  const key = crypto.createHash('sha256').update(SALT).update('\0').update(file).update('\0').update(source);
  const cached = path.join(CACHE, `${key.digest('hex').slice(0, 40)}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {}
  esbuild ??= require('esbuild');
  const { code } = esbuild.transformSync(source, { ...OPTIONS, sourcefile: file });
  // Written beside and renamed: a process that reads it at the same moment sees all of it or none.
  fs.mkdirSync(CACHE, { recursive: true });
  const temp = `${cached}.${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(temp, code);
  fs.renameSync(temp, cached);
  return code;
}

export async function load(url, context, nextLoad) {
  // A query makes another instance of the same file (`./x.ts?instance=a`).
  if (!url.startsWith('file:') || !new URL(url).pathname.endsWith('.ts')) return nextLoad(url, context);
  const file = fileURLToPath(url);
  return { format: 'module', source: compiled(file, fs.readFileSync(file, 'utf8')), shortCircuit: true };
}
