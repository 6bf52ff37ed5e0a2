/**
 * Memory of a training run as the batch grows: the demo (simulator) trained with the same number
 * of steps at batch 20 / 40 selection items and at batch 320 / 400, through the compiled CLI. For
 * each, the peak RSS of the process, and the peak of its live heap (sampled after a full GC while
 * the run goes on): what the run keeps, apart from garbage not yet collected. The RSS before the
 * first call is in `bench/startup.ts`. Prints figures; asserts nothing.
 *
 *   npx tsx bench/memory.ts [--epochs 2]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildIsCurrent } from '../bin/entry.js';

const { values: args } = parseArgs({ options: { epochs: { type: 'string', default: '2' } } });
const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/skillopt.js');

if (!buildIsCurrent(ROOT)) {
  console.log('the build is not current: building first (npm run build)\n');
  spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

/** Loaded before the program: samples the live heap, and reports on exit (fd 2, synchronously). */
const PROBE = `data:text/javascript,${encodeURIComponent(`
import fs from 'node:fs';
let live = 0, samples = 0;
setInterval(() => { globalThis.gc(); samples++; live = Math.max(live, process.memoryUsage().heapUsed); }, 200).unref();
process.on('exit', () => fs.writeSync(2, 'PROBE ' + JSON.stringify({ maxRss: process.resourceUsage().maxRSS * 1024, live, samples }) + '\\n'));
`)}`;

function run(batch: number, selection: number): { maxRss: number; live: number; samples: number; seconds: number } {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-memory-'));
  const sets = [`train.batch_size=${batch}`, `env.n_train=${batch * 5}`, `env.n_val=${selection}`, 'env.n_test=40', `train.num_epochs=${args.epochs}`];
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', PROBE, BIN, 'train', '--config', 'configs/sim/default.yaml', '--out', out, ...sets.flatMap((s) => ['--set', s])], { cwd: ROOT, encoding: 'utf8' });
  const seconds = (performance.now() - t0) / 1000;
  fs.rmSync(out, { recursive: true, force: true });
  const probe = /^PROBE (.+)$/m.exec(r.stderr)?.[1];
  if (r.status !== 0 || !probe) throw new Error(`the run at batch ${batch} failed (${r.status}): ${r.stderr}`);
  return { ...(JSON.parse(probe) as { maxRss: number; live: number; samples: number }), seconds };
}

const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB`;
console.log(`memory of a training run (sim, 5 steps per epoch, ${args.epochs} epochs; node ${process.version}, load ${os.loadavg()[0]!.toFixed(2)})\n`);
const small = run(20, 40);
const large = run(320, 400);
for (const [name, r] of [['batch 20 / 40 selection items', small], ['batch 320 / 400 selection items', large]] as const) {
  console.log(`${name.padEnd(34)} peak RSS ${mb(r.maxRss).padStart(7)}   peak live heap ${mb(r.live).padStart(6)} (${r.samples} samples)   ${r.seconds.toFixed(1)} s`);
}
console.log(`\nbatch 320 over batch 20: peak RSS ×${(large.maxRss / small.maxRss).toFixed(2)}, peak live heap ×${(large.live / small.live).toFixed(2)}`);
