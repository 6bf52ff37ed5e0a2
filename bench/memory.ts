/**
 * Memory of a training run as the batch grows: the demo (simulator) trained with the same number
 * of steps at batch 20 / 40 selection items and at batch 320 / 400, through the compiled CLI, with
 * a small simulated latency per call so that a run lasts seconds and is paced by its calls as a
 * real one is. For each size, two runs: one for the peak RSS of the process as a user runs it,
 * one for the peak of its live heap (a full GC before each sample, every 200 ms: what the run
 * keeps, apart from garbage not yet collected; those GCs would lower the first figure, hence its
 * own run). The RSS before the first call is in `bench/startup.ts`. Prints figures; asserts nothing.
 *
 *   npx tsx bench/memory.ts [--epochs 3] [--target-ms 2] [--optimizer-ms 5]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildIsCurrent } from '../bin/entry.js';

const { values: args } = parseArgs({
  options: {
    epochs: { type: 'string', default: '3' },
    'target-ms': { type: 'string', default: '2' },
    'optimizer-ms': { type: 'string', default: '5' },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/skillopt.js');

if (!buildIsCurrent(ROOT)) {
  console.log('the build is not current: building first (npm run build)\n');
  spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

/** Loaded before the program: reports on exit the peak RSS (fd 2, synchronously). */
const PEAK = `data:text/javascript,${encodeURIComponent(`
import fs from 'node:fs';
process.on('exit', () => fs.writeSync(2, 'PROBE ' + JSON.stringify({ maxRss: process.resourceUsage().maxRSS * 1024 }) + '\\n'));
`)}`;

/** Loaded before the program: samples the live heap after a full GC, and reports on exit. */
const LIVE = `data:text/javascript,${encodeURIComponent(`
import fs from 'node:fs';
let live = 0, samples = 0;
setInterval(() => { globalThis.gc(); samples++; live = Math.max(live, process.memoryUsage().heapUsed); }, 200).unref();
process.on('exit', () => fs.writeSync(2, 'PROBE ' + JSON.stringify({ live, samples }) + '\\n'));
`)}`;

function run(
  batch: number,
  selection: number,
  probe: string,
): { maxRss: number; live: number; samples: number; seconds: number } {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-memory-'));
  const sets = [
    `train.batch_size=${batch}`,
    `env.n_train=${batch * 5}`,
    `env.n_val=${selection}`,
    'env.n_test=40',
    `train.num_epochs=${args.epochs}`,
    `model.target.options.latency_ms=${args['target-ms']}`,
    `model.optimizer.options.latency_ms=${args['optimizer-ms']}`,
  ];
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      probe,
      BIN,
      'train',
      '--config',
      'configs/sim/default.yaml',
      '--out',
      out,
      ...sets.flatMap((s) => ['--set', s]),
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  const seconds = (performance.now() - t0) / 1000;
  fs.rmSync(out, { recursive: true, force: true });
  const line = /^PROBE (.+)$/m.exec(r.stderr)?.[1];
  if (r.status !== 0 || !line) throw new Error(`the run at batch ${batch} failed (${r.status}): ${r.stderr}`);
  return { maxRss: Number.NaN, live: Number.NaN, samples: 0, ...(JSON.parse(line) as object), seconds };
}

const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB`;
console.log(
  `memory of a training run (sim with ${args['target-ms']} / ${args['optimizer-ms']} ms per target / optimizer call, 5 steps per epoch, ${args.epochs} epochs; node ${process.version}, load ${os.loadavg()[0]!.toFixed(2)})\n`,
);
const sizes = [
  ['batch 20 / 40 selection items', 20, 40],
  ['batch 320 / 400 selection items', 320, 400],
] as const;
const results = sizes.map(([name, batch, selection]) => {
  const peak = run(batch, selection, PEAK);
  const live = run(batch, selection, LIVE);
  console.log(
    `${name.padEnd(34)} peak RSS ${mb(peak.maxRss).padStart(7)} (${peak.seconds.toFixed(1)} s)   peak live heap ${mb(live.live).padStart(6)} (${live.samples} samples)`,
  );
  return { peak, live };
});
const [small, large] = results as [(typeof results)[0], (typeof results)[0]];
console.log(
  `\nbatch 320 over batch 20: peak RSS ×${(large.peak.maxRss / small.peak.maxRss).toFixed(2)}, peak live heap ×${(large.live.live / small.live.live).toFixed(2)}`,
);
