/**
 * CPU time of the test suite, file by file: each test file runs in its own process, and its
 * CPU time (user + system, with every child process it waited for: CLI runs, browsers, agent
 * CLIs) is read from /proc (Linux). CPU time barely moves with the machine's load, where wall
 * time does, so this is the figure to compare before and after a change to the tests.
 *
 *   npx tsx bench/test-cpu.ts [--jobs 2] [--json out.json] [test/a.test.ts …]
 *
 * Without files it measures every test file, as `npm test` runs them (with its loader and its
 * temporary directory). Prints a table (most CPU
 * first), the total, and the idle wall time that total allows on two cores. Asserts nothing.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildIsCurrent } from '../bin/entry.js';
import { memoryTempDir } from '../scripts/memory-tmpdir.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { jobs: { type: 'string', default: '2' }, json: { type: 'string' } },
});

interface Measured {
  file: string;
  cpu: number;
  wall: number;
  ok: boolean;
}

const files =
  positionals.length > 0
    ? positionals
    : (fs.readdirSync(path.join(ROOT, 'test'), { recursive: true }) as string[])
        .map((f) => path.posix.join('test', f.split(path.sep).join('/')))
        .filter((f) => f.endsWith('.test.ts'))
        .sort();

const TICKS_PER_SECOND = 100;
// As `npm test` does: the CLI tests start the compiled bundle, which must match the sources.
if (!buildIsCurrent(ROOT)) {
  process.stderr.write('dist/ is older than the sources: building it first…\n');
  const built = spawnSync(process.execPath, ['scripts/build.js'], { cwd: ROOT, stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
/** The temporary directory the suite gives its tests (scripts/test.js). */
const tmp = memoryTempDir();
const env = tmp ? { ...process.env, TMPDIR: tmp } : process.env;

/**
 * Runs one file as the test runner's child process for it runs (`node --import ./scripts/ts-loader.js FILE`: the
 * runner's own start is paid once a suite), under a shell that, once it has exited, prints its own
 * /proc stat: cutime + cstime are the CPU of every descendant it and they waited for.
 */
function measure(file: string): Promise<Measured> {
  const script = `"$0" --import ./scripts/ts-loader.js "$1" >/dev/null 2>&1; s=$?; cat /proc/$$/stat; exit $s`;
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', script, process.execPath, file], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('close', (status) => {
      const fields = out.slice(out.lastIndexOf(')') + 2).split(' ');
      const cpu = (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND; // cutime, cstime
      resolve({ file, cpu, wall: (performance.now() - t0) / 1000, ok: status === 0 });
    });
  });
}

const results: Measured[] = [];
const queue = [...files];
await Promise.all(
  Array.from({ length: Math.max(1, Number(args.jobs)) }, async () => {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const m = await measure(file);
      results.push(m);
      process.stderr.write(
        `${m.cpu.toFixed(1).padStart(6)} s CPU ${m.wall.toFixed(1).padStart(6)} s wall  ${m.file}${m.ok ? '' : '  FAILED'}\n`,
      );
    }
  }),
);

if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
results.sort((a, b) => b.cpu - a.cpu);
const total = results.reduce((s, r) => s + r.cpu, 0);
console.log('\n  CPU s  wall s  file');
for (const r of results)
  console.log(`${r.cpu.toFixed(1).padStart(7)} ${r.wall.toFixed(1).padStart(7)}  ${r.file}${r.ok ? '' : '  FAILED'}`);
console.log(
  `\n${results.length} files, ${(total / 60).toFixed(2)} CPU-minutes; on two idle cores at least ${(total / 2 / 60).toFixed(2)} minutes of wall time`,
);
const failed = results.filter((r) => !r.ok);
if (failed.length > 0) console.log(`failed: ${failed.map((r) => r.file).join(', ')}`);
if (args.json) fs.writeFileSync(args.json, `${JSON.stringify(results, null, 1)}\n`);
