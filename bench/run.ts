/**
 * Engine benchmark: trains with a latency on every model call (target and optimizer with their
 * own latency and concurrency), in several shapes and on two workloads, and prints for each its
 * mean step wall time beside two critical-path floors computed from the same latencies and
 * counts (`bench/floors.ts`): this engine's, and the original's stage order (stages one after
 * another, its three merge phases, its ranking, the whole selection split every step). The
 * original itself does not run here; its floor is what its stage order costs at best, so the
 * ratio to it is a bound on what the original could reach, not a measurement of it.
 *
 * The workloads:
 * - `http`: the trainer end to end over real HTTP against a scripted OpenAI-compatible server in
 *   its own process on 127.0.0.1 (`skillopt-script.ts`): every step has failure and success
 *   patches, merges and, over the budget, a ranking. The goals are judged on this one.
 * - `sim`: the offline simulator with the latency injected; it converges, so after a few steps an
 *   analyst yields at most one patch and neither engine merges.
 *
 * Then the goals (mean step over the original's floor), what the gate overlap wasted, CPU per
 * model call, and a paired comparison of the test score of the two merge strategies over seeds.
 *
 *   npm run bench [-- --target-ms 200 --optimizer-ms 800 --analysts 16 --seeds 6 --only small --workload http]
 */
import { ownSeals } from './isolated-cache.ts';
import '../src/builtins.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/load.ts';
import { runTraining } from '../src/app/train.ts';
import { SimEnv } from '../src/envs/sim/env.ts';
import { SimModel } from '../src/model/sim/backend.ts';
import { readEvents } from '../src/run/events.ts';
import type { HistoryRecord } from '../src/run/records.ts';
import { originalFloor, ourFloor, type StepShape } from './floors.ts';
import { startScriptedServer } from './fake-server.ts';
import { DEMO_GRADIENT, writeHttpWorkload } from './http-workload.ts';
import { stepTimeline } from './timeline.ts';

const { values: args } = parseArgs({
  options: {
    'target-ms': { type: 'string', default: '200' },
    'optimizer-ms': { type: 'string', default: '800' },
    analysts: { type: 'string', default: '16' },
    seeds: { type: 'string', default: '6' },
    /** Run only the scenarios whose name starts with this. */
    only: { type: 'string', default: '' },
    /** Run only this workload (`http` or `sim`); both by default. */
    workload: { type: 'string', default: '' },
    /** Also the cost benches (prompt caching, batch pricing); `--no-costs` leaves them out. */
    costs: { type: 'boolean', default: true },
  },
  allowNegative: true,
});
const targetS = Number(args['target-ms']) / 1000;
const optimizerS = Number(args['optimizer-ms']) / 1000;
const analysts = Number(args.analysts);
const config = path.resolve(import.meta.dirname, '../configs/sim/default.yaml');

type Workload = 'http' | 'sim';

const WORKLOADS: Record<Workload, string> = {
  http: 'the trainer over HTTP against a scripted OpenAI-compatible server on 127.0.0.1 (its own process), at the default settings (configs/_base_): patches of both kinds, merges and rankings every step',
  sim: 'the offline simulator with the latency injected: it converges, and later steps have one patch and no merge',
};

interface Scenario {
  workload: Workload;
  name: string;
  batch: number;
  selection: number;
  workers: number;
  train: number;
  epochs: number;
  overlap: boolean;
  /** evaluation.gate_early_accept */
  early: boolean;
  /** Mean step over the original's floor must be at most this (judged at the default settings). */
  goal?: number;
  /** Gradient settings over the defaults (HTTP workload). */
  gradient?: Record<string, number>;
}

const SMALL = { batch: 20, selection: 40, workers: 8, train: 60, epochs: 2 };
const LARGE = { batch: 320, selection: 400, workers: 64, train: 960, epochs: 2 };
/** Each shape with default settings (the gate overlap on), without the overlap, and with the early accept too. */
const SHAPES = [
  { name: 'small', ...SMALL, overlap: true, early: false, goal: 0.45 },
  { name: 'small-no-overlap', ...SMALL, overlap: false, early: false },
  { name: 'small+early', ...SMALL, overlap: true, early: true },
  { name: 'large', ...LARGE, overlap: true, early: false, goal: 0.45 },
  { name: 'large-no-overlap', ...LARGE, overlap: false, early: false },
  { name: 'large+early', ...LARGE, overlap: true, early: true },
];
const SCENARIOS: Scenario[] = [
  ...SHAPES.map((shape) => ({ workload: 'http' as const, ...shape })),
  // The sim demo's smaller minibatches and merge groups: more patches, so more merge levels.
  { workload: 'http', name: 'small-demo-gradient', ...SMALL, overlap: true, early: false, gradient: DEMO_GRADIENT },
  ...SHAPES.filter((shape) => !shape.early).map((shape) => ({ workload: 'sim' as const, ...shape })),
];

/** How the models are reached on the sim: the simulator, with the latency. */
const simOverrides = () => [
  `model.target.options.latency_ms=${targetS * 1000}`,
  `model.optimizer.options.latency_ms=${optimizerS * 1000}`,
];

function overridesOf(x: Scenario): string[] {
  return [
    ...(x.workload === 'sim' ? simOverrides() : []),
    `env.workers=${x.workers}`,
    `model.target.concurrency=${x.workers}`,
    `gradient.analyst_workers=${analysts}`,
    `model.optimizer.concurrency=${analysts}`,
    `train.batch_size=${x.batch}`,
    `train.num_epochs=${x.epochs}`,
    ...(x.workload === 'sim' ? [`env.n_train=${x.train}`, `env.n_val=${x.selection}`, 'env.n_test=20'] : []),
    `evaluation.gate_overlap=${x.overlap}`,
    `evaluation.gate_early_accept=${x.early}`,
  ];
}

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** CPU of the simulator's own answers for `n` calls, measured apart: the same answers without the engine. */
async function simCpuMs(n: number, skill: string): Promise<number> {
  const env = new SimEnv({ n_train: 10, n_val: 10, n_test: 60, noise: 0.06, data_seed: 7 });
  const sim = new SimModel('sim-1', 42, 0, { harmful: 0.3, irrelevant: 0.35, vague: 0.15, blame: 0.35 });
  const { test } = await env.load();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await env.rollout(test[i % test.length]!, skill, { target: sim, seed: 1 });
  return cpuMs(process.cpuUsage(start));
}

async function runScenario(x: Scenario) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), `skillopt-bench-${x.workload}-${x.name}-`));
  let server: Awaited<ReturnType<typeof startScriptedServer>> | undefined;
  let file = config;
  if (x.workload === 'http') {
    const env = { n_train: x.train, n_val: x.selection, n_test: 20 };
    server = await startScriptedServer(targetS * 1000, optimizerS * 1000, env);
    file = await writeHttpWorkload(
      fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-data-')),
      server.url,
      env,
      x.gradient,
    );
  }
  const loaded = loadConfig(file, { overrides: [ownSeals(out), ...overridesOf(x)], environment: {} });
  const cpuStart = process.cpuUsage();
  const outcome = await runTraining({ loaded, outRoot: out, configFile: file, console: false }).finally(() =>
    server?.stop(),
  );
  const cpu = cpuMs(process.cpuUsage(cpuStart));
  if (outcome.status !== 'finished')
    throw new Error(`${x.workload} ${x.name}: the run did not finish: ${outcome.status}`);

  const history = JSON.parse(fs.readFileSync(path.join(out, 'history.json'), 'utf8')) as HistoryRecord[];
  const events = readEvents(path.join(out, 'events.jsonl'));
  // A step's wall time: from its first stage to its end, or to the next step's start when that
  // came first (after an early accept the step's last selection items run beside the next step).
  const at = (iso: string) => Date.parse(iso) / 1000;
  const started = new Map<number, number>();
  const finished = new Map<number, number>();
  for (const e of events) {
    if (e.type === 'stage_started' && e.step > 0 && !started.has(e.step)) started.set(e.step, at(e.time));
    if (e.type === 'step_finished') finished.set(e.step, at(e.time));
  }
  const wallOf = (step: number) =>
    Math.min(finished.get(step) ?? Number.NaN, started.get(step + 1) ?? Infinity) - (started.get(step) ?? Number.NaN);
  const overlaps = events.flatMap((e) => (e.type === 'gate_overlap' ? [e] : []));
  const reflections = events.flatMap((e) => (e.type === 'reflect_ahead' ? [e] : []));
  const acceptedAfter = new Map(
    events.flatMap((e) =>
      e.type === 'gate_decision' && e.accepted_after !== undefined ? [[e.step, e.accepted_after] as const] : [],
    ),
  );
  const calls = fs
    .readFileSync(path.join(out, 'calls.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { purpose: string; from: string });
  const provider = calls.filter((c) => c.from === 'provider').length;
  const shape: StepShape = {
    targetS,
    optimizerS,
    workers: x.workers,
    analysts,
    mergeGroup: loaded.config.gradient.merge_batch_size,
    batch: x.batch,
    selection: x.selection,
    strategy: loaded.config.gradient.merge_strategy,
  };
  // A step's analyst calls: its minibatches, as its reflect stage announced them.
  const minibatches = new Map(
    events.flatMap((e) => {
      if (e.type !== 'stage_started' || e.stage !== 'reflect') return [];
      const m = /(\d+) failure minibatch(?:es)?, (\d+) success minibatch/.exec(e.detail ?? '');
      return m ? [[e.step, Number(m[1]) + Number(m[2])] as const] : [];
    }),
  );
  const steps = history.map((r) => {
    const n = minibatches.get(r.step) ?? 0;
    return {
      step: r.step,
      wall: wallOf(r.step),
      ours: ourFloor(r, shape, n, acceptedAfter.get(r.step)),
      original: originalFloor(r, shape, n),
    };
  });
  const skill = fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8');
  // Over HTTP the answers are made in the server's process; on the sim they are subtracted.
  const orchestration = (cpu - (x.workload === 'sim' ? await simCpuMs(provider, skill) : 0)) / provider;
  return { x, out, steps, overlaps, reflections, provider, orchestration };
}

/** The test score of the best skill with each merge strategy, seed by seed (no latency: the decisions alone). */
async function pairedStrategies(seeds: number) {
  const rows: { seed: number; staged: number; combined: number; stagedCalls: number; combinedCalls: number }[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    const one = async (strategy: string) => {
      const out = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-paired-'));
      const loaded = loadConfig(config, {
        overrides: [ownSeals(out), `train.seed=${seed}`, `gradient.merge_strategy=${strategy}`],
        environment: {},
      });
      const outcome = await runTraining({ loaded, outRoot: out, configFile: config, console: false });
      if (outcome.status !== 'finished') throw new Error(`seed ${seed}, ${strategy}: the run did not finish`);
      const merge = (outcome.summary.token_summary as Record<string, { calls: number }> | undefined) ?? {};
      return {
        test: Number(outcome.summary.test_hard),
        calls: (merge.merge?.calls ?? 0) + (merge.ranking?.calls ?? 0),
      };
    };
    const staged = await one('staged');
    const combined = await one('combined');
    rows.push({
      seed,
      staged: staged.test,
      combined: combined.test,
      stagedCalls: staged.calls,
      combinedCalls: combined.calls,
    });
  }
  return rows;
}

// A short run first, so that one-time costs (module loading, the tokenizer's tables) fall outside the scenarios.
await runTraining({
  loaded: loadConfig(config, {
    overrides: ['train.num_epochs=1', 'env.n_train=10', 'env.n_val=5', 'env.n_test=5'],
    environment: {},
  }),
  outRoot: fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-warmup-')),
  configFile: config,
  console: false,
});

console.log(
  `latencies: target ${targetS * 1000} ms, optimizer ${optimizerS * 1000} ms x ${analysts} in flight; step times to the millisecond`,
);
console.log(
  "floors: ours = this engine's critical path; original = the original's stage order, from the same latencies and counts (computed: the original does not run here)",
);
for (const [w, what] of Object.entries(WORKLOADS)) console.log(`workload ${w}: ${what}`);
console.log('');
const results = [];
for (const x of SCENARIOS.filter(
  (s) => s.name.startsWith(args.only) && (!args.workload || s.workload === args.workload),
)) {
  const r = await runScenario(x);
  results.push(r);
  const gradient = x.gradient
    ? ` / ${Object.entries(x.gradient)
        .map(([k, v]) => `gradient.${k}=${v}`)
        .join(' ')}`
    : '';
  console.log(
    `${x.workload} ${x.name}: batch ${x.batch} / ${x.selection} selection items / ${x.workers} workers${x.overlap ? '' : ' / evaluation.gate_overlap=false'}${x.early ? ' / evaluation.gate_early_accept' : ''}${gradient} (${r.out})`,
  );
  console.log(`  step   wall_s  our_floor_s${x.overlap ? '*' : ' '} original_floor_s  wall/original`);
  for (const s of r.steps) {
    console.log(
      `  ${String(s.step).padStart(4)}  ${s.wall.toFixed(3).padStart(7)}  ${s.ours.toFixed(2).padStart(11)}  ${s.original.toFixed(2).padStart(16)}  ${(s.wall / s.original).toFixed(2).padStart(13)}`,
    );
  }
  // The step of median wall time, stage by stage: where the path is long and the target idle.
  const median = [...r.steps].sort((a, b) => a.wall - b.wall)[Math.floor(r.steps.length / 2)];
  if (median)
    for (const line of stepTimeline(r.out, median.step, { target: x.workers, optimizer: analysts })) console.log(line);
  if (x.overlap) {
    console.log('  * our floor without the overlap: a step whose rollouts ran ahead can take less');
    const right = r.overlaps.filter((o) => o.right).length;
    const ran = r.overlaps.reduce((n, o) => n + o.rollouts, 0);
    const wasted = r.overlaps.reduce((n, o) => n + o.wasted, 0);
    console.log(
      `  overlap: ${right} of ${r.overlaps.length} guesses right; ${ran} rollouts run ahead, ${wasted} wasted (${((100 * wasted) / Math.max(1, r.provider)).toFixed(1)}% of the run's ${r.provider} calls)`,
    );
    const sum = (k: 'calls' | 'taken' | 'wasted') => r.reflections.reduce((n, e) => n + e[k], 0);
    console.log(
      `  reflection ahead: ${sum('calls')} optimizer calls made during the gate before, ${sum('taken')} taken by the next step, ${sum('wasted')} wasted`,
    );
  }
  const cpuNote =
    x.workload === 'sim'
      ? "the sim's own answers measured apart and subtracted"
      : 'HTTP client included; the answers are made in the server process';
  console.log(`  cpu: orchestration ${r.orchestration.toFixed(3)} ms per model call (${cpuNote})\n`);
}

console.log('goals (mean step / mean original floor), judged on the http workload; the sim lines for comparison:');
for (const r of results) {
  const wall = mean(r.steps.map((s) => s.wall));
  const original = mean(r.steps.map((s) => s.original));
  const ours = mean(r.steps.map((s) => s.ours));
  const ratio = wall / original;
  console.log(
    `  ${r.x.workload.padEnd(4)} ${r.x.name.padEnd(19)} mean step ${wall.toFixed(3)} s, our floor ${ours.toFixed(2)} s, original floor ${original.toFixed(2)} s: ${ratio.toFixed(2)}x ${r.x.goal === undefined ? '(no goal)' : r.x.workload === 'http' ? `(goal <= ${r.x.goal}: ${ratio <= r.x.goal ? 'met' : 'NOT met'})` : `(goal ${r.x.goal} judged on http)`}`,
  );
}

const seeds = Number(args.seeds);
if (seeds > 0) {
  const rows = await pairedStrategies(seeds);
  console.log(
    `\nmerge strategies, paired over ${seeds} seeds (the demo config, train.seed=1..${seeds}): test_hard of the best skill, merge+ranking calls`,
  );
  console.log('  seed  staged  combined  diff    calls staged/combined');
  for (const r of rows)
    console.log(
      `  ${String(r.seed).padStart(4)}  ${r.staged.toFixed(4)}  ${r.combined.toFixed(4).padStart(8)}  ${(r.combined - r.staged).toFixed(4).padStart(7)}  ${r.stagedCalls}/${r.combinedCalls}`,
    );
  const diffs = rows.map((r) => r.combined - r.staged);
  console.log(
    `  mean diff ${mean(diffs).toFixed(4)}; combined worse on ${diffs.filter((d) => d < 0).length} of ${seeds} seeds, better on ${diffs.filter((d) => d > 0).length}`,
  );
}

// The cost goals, each its own script (also `npm run bench:cache` and `npm run bench:batch`).
if (args.costs)
  for (const script of ['prompt-cache.ts', 'batch.ts']) {
    console.log('');
    const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, script)], {
      stdio: 'inherit',
    });
    if (run.status !== 0) process.exitCode = 1;
  }
