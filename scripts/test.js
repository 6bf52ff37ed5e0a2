// The test suite: `npm test` runs all of it, `npm run test:unit` the fast lane (the tests that
// call the code in this process: no CLI child, browser, agent CLI, Redis or packed package).
// First the build, when the sources changed since the last one: the tests that run the
// `skillopt` command then start the compiled bundle, not the sources through tsx (a child
// process starts several times faster). Then the programs the suite needs are checked
// (scripts/test-preflight.ts). The tests load the TypeScript through scripts/ts-loader.js (a
// lighter loader than tsx, for the suite's many processes), with their temporary files in
// memory where the system allows it (memoryTempDir). Extra arguments go to `node --test` (e.g.
// `--test-name-pattern`).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildIsCurrent } from '../bin/entry.js';
import { memoryTempDir } from './memory-tmpdir.js';

const root = path.resolve(import.meta.dirname, '..');
const [lane = 'all', ...rest] = process.argv.slice(2);
if (lane !== 'all' && lane !== 'unit') {
  process.stderr.write(`scripts/test.js: the lane is 'all' or 'unit', not '${lane}'\n`);
  process.exit(2);
}

/** Where the tests of the slow lane live: they start programs (ours, a browser, agent CLIs, Redis). */
const SLOW = ['test/cli/', 'test/web/', 'test/mcp/', 'test/queue/', 'test/model/harness/', 'test/package.test.ts'];

const run = (args) => {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

if (!buildIsCurrent(root)) {
  process.stdout.write('dist/ is missing or older than the sources: building it first (npm run build)…\n');
  run(['scripts/build.js']);
}
const LOADER = ['--import', './scripts/ts-loader.js'];
run([...LOADER, 'scripts/test-preflight.ts']);

const files = fs
  .readdirSync(path.join(root, 'test'), { recursive: true })
  .map((f) => path.posix.join('test', f.split(path.sep).join('/')))
  .filter((f) => f.endsWith('.test.ts'))
  .filter((f) => lane === 'all' || !SLOW.some((s) => f.startsWith(s)))
  .sort();

const tmp = memoryTempDir();
// Ctrl-C reaches the tests, which stop; this process waits for them, then removes the directory.
process.on('SIGINT', () => {});
const r = spawnSync(process.execPath, [...LOADER, '--test', '--test-concurrency=2', ...rest, ...files], {
  cwd: root,
  stdio: 'inherit',
  env: tmp ? { ...process.env, TMPDIR: tmp } : process.env,
});
if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
process.exit(r.status ?? 1);
