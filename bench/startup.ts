/**
 * Start-up of the `skillopt` command as a user runs it (a new process each time, the compiled
 * build): the time `--help` takes, and for the demo config the time from the start of the
 * process to its first model call, with the process's RSS at that moment. Medians over several
 * runs. Prints figures; asserts nothing.
 *
 *   npx tsx bench/startup.ts [--runs 10]
 *
 * The first call is timed twice: with the demo as shipped (the simulator answers at once, so the
 * first line of the run's calls.jsonl is the first call), and with the target moved to an
 * OpenAI-compatible fake server on 127.0.0.1, which notes when the first request arrives and reads
 * the client's RSS from /proc while the client waits for the answer (Linux).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildIsCurrent } from '../bin/entry.js';
import { startFakeProvider } from '../test/helpers/fake-provider.ts';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '10' } } });
const RUNS = Number(args.runs);
const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/skillopt.js');
const DEMO = path.join(ROOT, 'configs/sim/default.yaml');

if (!buildIsCurrent(ROOT)) {
  console.log('the build is not current: building first (npm run build)\n');
  spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

function row(name: string, values: number[], unit: string, digits = 0): void {
  const sorted = [...values].sort((a, b) => a - b);
  console.log(
    `${name.padEnd(56)} median ${median(values).toFixed(digits).padStart(6)} ${unit}  (min ${sorted[0]!.toFixed(digits)}, max ${sorted.at(-1)!.toFixed(digits)}, ${values.length} runs)`,
  );
}

/** Loaded before the program: reports on exit the CPU time the process used (fd 2, synchronously). */
const CPU_PROBE = `data:text/javascript,${encodeURIComponent(
  "import fs from 'node:fs'; process.on('exit', () => { const c = process.cpuUsage(); fs.writeSync(2, 'CPU ' + (c.user + c.system) / 1000 + '\\n'); });",
)}`;

/** Wall time and CPU time of one run of the command, ms. */
function timed(argv: string[]): { wall: number; cpu: number } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', CPU_PROBE, BIN, ...argv], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`skillopt ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { wall: performance.now() - t0, cpu: Number(/^CPU (\S+)$/m.exec(r.stderr)?.[1]) };
}

/** CPU time a process has used so far, ms (Linux), or NaN. */
function cpuMs(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return NaN;
  }
}

/** The demo run to its end; ms from the start of the process to its first recorded call. */
function demoFirstCall(): { firstCallMs: number; totalMs: number } {
  const out = tmp('skillopt-startup-');
  const started = Date.now();
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, 'train', '--config', DEMO, '--out', out], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const totalMs = performance.now() - t0;
  if (r.status !== 0) throw new Error(`the demo exited ${r.status}: ${r.stderr}`);
  const first = JSON.parse(fs.readFileSync(path.join(out, 'calls.jsonl'), 'utf8').split('\n')[0]!) as { time: string };
  fs.rmSync(out, { recursive: true, force: true });
  return { firstCallMs: Date.parse(first.time) - started, totalMs };
}

/** RSS of a process, MB (Linux), or NaN. */
function rssMb(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The demo with its target on a fake server: ms to the first request, and the client's RSS then. */
async function httpFirstCall(): Promise<{ firstCallMs: number; rss: number; cpu: number }> {
  let child: ReturnType<typeof spawn> | undefined;
  let resolveFirst!: (v: { firstCallMs: number; rss: number; cpu: number }) => void;
  const first = new Promise<{ firstCallMs: number; rss: number; cpu: number }>((resolve) => (resolveFirst = resolve));
  let t0 = 0;
  let seen = false;
  const server = await startFakeProvider({
    respond: () => {
      if (!seen) {
        seen = true;
        resolveFirst({ firstCallMs: performance.now() - t0, rss: rssMb(child!.pid!), cpu: cpuMs(child!.pid!) });
      }
      return { text: '<answer>x</answer>' };
    },
  });
  const out = tmp('skillopt-startup-http-');
  const overrides = [
    'model.target.backend=openai_compatible',
    'model.target.model=bench',
    `model.target.base_url=${server.url}/v1`,
    'cache.mode=off',
  ];
  t0 = performance.now();
  child = spawn(
    process.execPath,
    [BIN, 'train', '--config', DEMO, '--out', out, ...overrides.flatMap((o) => ['--set', o])],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<never>((_, reject) =>
    child!.on('exit', (code) => reject(new Error(`the client exited (${code}) before calling: ${stderr}`))),
  );
  try {
    return await Promise.race([first, exited]);
  } finally {
    child.removeAllListeners('exit');
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    await server.close();
    fs.rmSync(out, { recursive: true, force: true });
  }
}

console.log(
  `start-up of the compiled CLI (node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)})`,
);
console.log("wall times depend on the machine's load; CPU times (user + system) much less\n");
timed(['--version']); // warm the file cache
for (const argv of [['--help'], ['--version']]) {
  const runs = Array.from({ length: RUNS }, () => timed(argv));
  row(
    `skillopt ${argv[0]}: wall`,
    runs.map((r) => r.wall),
    'ms',
  );
  row(
    `skillopt ${argv[0]}: CPU`,
    runs.map((r) => r.cpu),
    'ms',
  );
}
const demos = Array.from({ length: Math.max(3, Math.ceil(RUNS / 2)) }, demoFirstCall);
row(
  'demo (sim): start to first model call, wall',
  demos.map((d) => d.firstCallMs),
  'ms',
);
row(
  'demo (sim): whole run, wall',
  demos.map((d) => d.totalMs),
  'ms',
);
const http: { firstCallMs: number; rss: number; cpu: number }[] = [];
for (let i = 0; i < Math.max(3, Math.ceil(RUNS / 2)); i++) http.push(await httpFirstCall());
row(
  'demo, target over HTTP: start to first request, wall',
  http.map((h) => h.firstCallMs),
  'ms',
);
row(
  'demo, target over HTTP: CPU at the first request',
  http.map((h) => h.cpu),
  'ms',
);
row(
  'demo, target over HTTP: RSS at the first request',
  http.map((h) => h.rss),
  'MB',
);
