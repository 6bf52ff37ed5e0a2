/**
 * Engine benchmark: trains the sim with a latency injected into every model call (target and
 * optimizer with their own latency and concurrency) and prints, per step and in total, the wall
 * time, the floor (the critical path of dependent calls given the concurrency limits), their
 * ratio, calls per stage, selection rollouts saved by the gate, and CPU time per model call.
 *
 *   npm run bench [-- --target-ms 40 --optimizer-ms 120 --workers 8 --analysts 4 --epochs 2]
 *
 * The sim's own answers cost CPU too; they are measured apart and subtracted, so the last line
 * is the orchestration's own cost per call.
 */
import '../src/builtins.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/load.ts';
import { runTraining } from '../src/app/train.ts';
import { SimEnv } from '../src/envs/sim/env.ts';
import { SimModel } from '../src/model/sim/backend.ts';
import type { HistoryRecord } from '../src/run/records.ts';

const { values: args } = parseArgs({
  options: {
    'target-ms': { type: 'string', default: '40' },
    'optimizer-ms': { type: 'string', default: '120' },
    workers: { type: 'string', default: '8' },
    analysts: { type: 'string', default: '4' },
    epochs: { type: 'string', default: '2' },
  },
});
const Lt = Number(args['target-ms']) / 1000;
const Lo = Number(args['optimizer-ms']) / 1000;
const ct = Number(args.workers);
const co = Number(args.analysts);
const config = path.resolve(import.meta.dirname, '../configs/sim/default.yaml');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-'));

const overrides = [
  `model.target.options.latency_ms=${Lt * 1000}`,
  `model.optimizer.options.latency_ms=${Lo * 1000}`,
  `env.workers=${ct}`,
  `model.target.concurrency=${ct}`,
  `gradient.analyst_workers=${co}`,
  `model.optimizer.concurrency=${co}`,
  `train.num_epochs=${args.epochs}`,
];
const loaded = loadConfig(config, { overrides, environment: {} });
// A short run first, so that one-time costs (module loading, the tokenizer's tables) are not
// counted per call.
await runTraining({
  loaded: loadConfig(config, { overrides: ['train.num_epochs=1', 'env.n_train=10', 'env.n_val=5', 'env.n_test=5'], environment: {} }),
  outRoot: fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-warmup-')),
  configFile: config,
  console: false,
});
const cpuStart = process.cpuUsage();
const wallStart = performance.now();
const outcome = await runTraining({ loaded, outRoot: out, configFile: config, console: false });
const wall = (performance.now() - wallStart) / 1000;
const cpu = process.cpuUsage(cpuStart);
if (outcome.status !== 'finished') throw new Error(`the run did not finish: ${outcome.status}`);

const history = JSON.parse(fs.readFileSync(path.join(out, 'history.json'), 'utf8')) as HistoryRecord[];
const events = fs.readFileSync(path.join(out, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const stepSeconds = new Map<number, number>(events.filter((e) => e.type === 'step_finished').map((e) => [e.step, e.seconds]));
const calls = fs.readFileSync(path.join(out, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { purpose: string; from: string });
const groupSize = loaded.config.gradient.merge_batch_size;

const waves = (n: number, c: number) => Math.ceil(n / c);
const levels = (n: number) => (n <= 1 ? 0 : Math.ceil(Math.log(n) / Math.log(groupSize)));

/**
 * The least time a step can take with these latencies and limits: the training rollouts, the
 * analysts (which overlap them but the last needs the last rollout), the merge levels and the
 * final merge, the ranking call, then the selection rollouts the gate ran.
 */
function stepFloor(r: HistoryRecord): number {
  const tokens = r.tokens ?? {};
  const gateRuns = r.gate?.rollouts_used ?? 0;
  const trainRuns = Math.max(0, (tokens.rollout?.calls ?? 0) - gateRuns);
  const analysts = tokens.analyst?.calls ?? 0;
  const f = r.n_failure_patches ?? 0;
  const s = r.n_success_patches ?? 0;
  const mergeChain = (tokens.merge?.calls ?? 0) > 0 ? Math.max(levels(f), levels(s)) + (f > 0 && s > 0 ? 1 : 0) : 0;
  const reflect = analysts > 0 ? Math.max(waves(trainRuns, ct) * Lt + Lo, Lt + waves(analysts, co) * Lo) : waves(trainRuns, ct) * Lt;
  const ranking = (tokens.ranking?.calls ?? 0) > 0 ? Lo : 0;
  return reflect + mergeChain * Lo + ranking + waves(gateRuns, ct) * Lt;
}

console.log(`sim, ${history.length} steps; target ${Lt * 1000} ms x ${ct}, optimizer ${Lo * 1000} ms x ${co}, merge groups of ${groupSize}`);
console.log('step  wall_s  floor_s  ratio  rollout analyst merge ranking  gate_used gate_saved');
let floorSum = 0;
let stepWall = 0;
for (const r of history) {
  const floor = stepFloor(r);
  const w = stepSeconds.get(r.step) ?? 0;
  floorSum += floor;
  stepWall += w;
  const t = r.tokens ?? {};
  console.log(
    `${String(r.step).padStart(4)}  ${w.toFixed(2).padStart(6)}  ${floor.toFixed(2).padStart(7)}  ${(floor > 0 ? w / floor : 0).toFixed(2).padStart(5)}  ` +
      `${String(t.rollout?.calls ?? 0).padStart(7)} ${String(t.analyst?.calls ?? 0).padStart(7)} ${String(t.merge?.calls ?? 0).padStart(5)} ${String(t.ranking?.calls ?? 0).padStart(7)}  ` +
      `${String(r.gate?.rollouts_used ?? '-').padStart(9)} ${String(r.gate?.rollouts_saved ?? '-').padStart(10)}`,
  );
}

// Outside the steps: baseline, epoch boundaries and final evaluation, all rollout-bound.
const provider = calls.filter((c) => c.from === 'provider');
const stepRollouts = history.reduce((n, r) => n + (r.tokens?.rollout?.calls ?? 0), 0);
const otherRollouts = provider.filter((c) => c.purpose === 'rollout').length - stepRollouts;
const otherOptimizer = provider.filter((c) => c.purpose === 'slow_update' || c.purpose === 'meta_skill').length;
const otherFloor = waves(otherRollouts, ct) * Lt + otherOptimizer * Lo;
const totalFloor = floorSum + otherFloor;

const perStage = new Map<string, number>();
for (const c of provider) perStage.set(c.purpose, (perStage.get(c.purpose) ?? 0) + 1);

// CPU of the simulator itself, measured apart: the same number of answers without the engine.
const env = new SimEnv({ n_train: 10, n_val: 10, n_test: 60, noise: 0.06, data_seed: 7 });
const sim = new SimModel('sim-1', 42, 0, { harmful: 0.3, irrelevant: 0.35, vague: 0.15, blame: 0.35 });
const { test } = await env.load();
const skill = fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8');
const simStart = process.cpuUsage();
for (let i = 0; i < provider.length; i++) await env.rollout(test[i % test.length]!, skill, { target: sim, seed: 1 });
const simCpu = process.cpuUsage(simStart);
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

console.log('');
console.log(`steps:   wall ${stepWall.toFixed(2)} s, floor ${floorSum.toFixed(2)} s, ratio ${(stepWall / floorSum).toFixed(2)}`);
console.log(`run:     wall ${wall.toFixed(2)} s (with baseline, epoch boundaries and final evaluation), floor ${totalFloor.toFixed(2)} s, ratio ${(wall / totalFloor).toFixed(2)}`);
console.log(`calls:   ${provider.length} (${[...perStage].map(([k, v]) => `${k} ${v}`).join(', ')})`);
const saved = history.reduce((n, r) => n + (r.gate?.rollouts_saved ?? 0), 0);
const used = history.reduce((n, r) => n + (r.gate?.rollouts_used ?? 0), 0);
console.log(`gate:    ${used} selection rollouts run, ${saved} saved (${((100 * saved) / Math.max(1, used + saved)).toFixed(0)}%) by the score cache and early stopping`);
console.log(`cpu:     ${(cpuMs(cpu) / provider.length).toFixed(3)} ms per call in all; the sim's own answers ${(cpuMs(simCpu) / provider.length).toFixed(3)} ms per call; orchestration ${((cpuMs(cpu) - cpuMs(simCpu)) / provider.length).toFixed(3)} ms per call`);
console.log(`run directory: ${out}`);
