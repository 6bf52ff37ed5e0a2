// The build: the TypeScript of src/ compiled to JavaScript in dist/ (same layout, so paths
// relative to a module stay valid), with declarations for the library, and the files that are
// not TypeScript (the dashboard's static files, worker and Python scripts) copied beside it.
// Then the command line bundled from that JavaScript (scripts/bundle-cli.js). Types are checked
// by `npm run typecheck`, not here. The stamp is written last.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { BUILD_STAMP } from '../bin/entry.js';
import { bundleCli } from './bundle-cli.js';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');
const started = new Date();

fs.rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--noCheck'], { stdio: 'inherit' });

for (const file of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!file.isFile() || file.name.endsWith('.ts')) continue;
  const from = path.join(file.parentPath ?? file.path, file.name);
  const to = path.join(dist, path.relative(src, from));
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to);
}

// The tokenizer's byte-pair table as JSON (src/skill/document.ts: it parses faster than the
// package's JavaScript compiles).
const ranks = createRequire(import.meta.url)('gpt-tokenizer/bpeRanks/o200k_base').default;
fs.mkdirSync(path.join(dist, 'tokenizer'), { recursive: true });
fs.writeFileSync(path.join(dist, 'tokenizer', 'o200k_base.json'), JSON.stringify(ranks));

await bundleCli(dist);

const stamp = path.join(root, BUILD_STAMP);
fs.writeFileSync(stamp, `${started.toISOString()}\n`);
fs.utimesSync(stamp, started, started);
