// The test suite: `npm test` runs all of it, `npm run test:unit` the fast lane (the tests that
// call the code in this process and start no program; scripts/no-child-processes.js enforces it).
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

/**
 * The tests of the slow lane: they start programs (ours, a browser, agent CLIs, Redis, Python, a
 * fake server in its own process, a process killed mid-write). The fast lane's guard
 * (scripts/no-child-processes.js) fails a test that starts one and is not listed here.
 */
const SLOW = [
  'test/cli/',
  'test/web/',
  'test/mcp/',
  'test/queue/',
  'test/model/harness/',
  'test/package.test.ts',
  'test/app/eval/eval-stack.test.ts',
  'test/app/eval/evaluate.test.ts',
  'test/app/eval/transfer.test.ts',
  'test/app/transfer.test.ts',
  'test/app/useless-run.test.ts',
  'test/config/hostile.test.ts',
  'test/config/load.test.ts',
  'test/deploy/deploy-crash.test.ts',
  'test/deploy/deploy.test.ts',
  'test/deploy/package.test.ts',
  'test/engine/package-train.test.ts',
  'test/engine/resume.test.ts',
  'test/engine/state.test.ts',
  'test/envs/alfworld-train.test.ts',
  'test/envs/alfworld.test.ts',
  'test/envs/data.test.ts',
  'test/envs/materialize.test.ts',
  'test/envs/spreadsheetbench-train.test.ts',
  'test/envs/spreadsheetbench.test.ts',
  'test/envs/tasks-walkthrough.test.ts',
  'test/model/cache.test.ts',
  'test/model/dry-run-plan.test.ts',
  'test/model/retry-watch.test.ts',
  'test/model/secrets.test.ts',
  'test/model/sim/token-count.test.ts',
  'test/model/stop-and-reach.test.ts',
  'test/model/training-over-http.test.ts',
  'test/run/activity.test.ts',
  'test/run/atomic.test.ts',
  'test/run/events.test.ts',
  'test/run/history-rebuild.test.ts',
  'test/run/journals.test.ts',
  'test/run/lock-contention.test.ts',
  'test/run/lock.test.ts',
  'test/run/resume-command.test.ts',
  'test/scripts/fast-lane-guard.test.ts',
  'test/scripts/test-preflight.test.ts',
  'test/skill/package/archive.test.ts',
  'test/skill/package/validate.test.ts',
  'test/skill/tokenizer.test.ts',
  'test/sleep/adopt-crash.test.ts',
  'test/sleep/adopt-package-crash.test.ts',
  'test/sleep/cli.test.ts',
  'test/sleep/harvest/redaction.test.ts',
  'test/sleep/install.test.ts',
  'test/sleep/night-audit.test.ts',
  'test/sleep/night-package.test.ts',
  'test/sleep/night.test.ts',
  'test/sleep/schedule.test.ts',
  'test/sleep/status.test.ts',
  'test/sleep/yield.test.ts',
  'test/util/stats.test.ts',
];

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
// The fast lane starts no program (scripts/no-child-processes.js).
const GUARD = lane === 'unit' ? ['--import', './scripts/no-child-processes.js'] : [];
const r = spawnSync(process.execPath, [...LOADER, ...GUARD, '--test', '--test-concurrency=2', ...rest, ...files], {
  cwd: root,
  stdio: 'inherit',
  env: tmp ? { ...process.env, TMPDIR: tmp } : process.env,
});
if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
process.exit(r.status ?? 1);
