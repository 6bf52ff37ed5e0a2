/**
 * The exact gate against the paired gate (`evaluation.gate`), on the simulator with a stochastic
 * target (`model.target.options.noise`), over many seeds: how often each takes a harmful edit,
 * a neutral one (its false accept rate; the paired gate's should be near alpha), and a real gain
 * (its power). Then the candidate pool (`optimizer.pool_size`) against the single-skill loop,
 * trained on the simulator across seeds: test score and calls, as ratios. Prints figures;
 * asserts nothing.
 *
 *   npx tsx bench/gate.ts [--seeds 200] [--runs 12]
 */
import { ownSeals } from './isolated-cache.ts';
import '../src/builtins.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runTraining } from '../src/app/train.ts';
import { loadConfig } from '../src/config/load.ts';
import { gateCandidate } from '../src/engine/stages/gate-evaluation.ts';
import { CONVENTIONS } from '../src/model/sim/rules.ts';
import { gateContext, HARMFUL, NEUTRAL, STRONG } from '../test/helpers/gate.ts';

const { values: args } = parseArgs({
  options: { seeds: { type: 'string', default: '200' }, runs: { type: 'string', default: '12' } },
});
const SEEDS = Number(args.seeds);
const RUNS = Number(args.runs);

/** The strong skill without its last convention: the strong skill is a real gain over it. */
const WEAKER = CONVENTIONS.slice(0, -1)
  .map((c) => `- ${c.rules[0]}`)
  .join('\n');

const pct = (k: number, n: number) => `${((100 * k) / n).toFixed(1)}%`;

async function acceptRate(
  current: string,
  candidate: string,
  gate: Record<string, unknown>,
  noise: number,
): Promise<{ accepted: number; rollouts: number }> {
  let accepted = 0;
  let rollouts = 0;
  for (let seed = 0; seed < SEEDS; seed++) {
    const ctx = await gateContext(gate, noise, seed);
    const base = await ctx.selection.score(current);
    const reference = { skill: current, score: base.gate, origin: 'current' };
    const out = await gateCandidate(ctx, candidate, reference, reference, { rule: 'gate' });
    if (out.decision.replacesCurrent) accepted++;
    rollouts += out.sel.used + out.referenceRollouts;
  }
  return { accepted, rollouts };
}

async function gates(): Promise<void> {
  const cases = [
    ['harmful edit', STRONG, HARMFUL],
    ['neutral edit', STRONG, NEUTRAL],
    ['real gain', WEAKER, STRONG],
  ] as const;
  const configs: [string, Record<string, unknown>][] = [
    ['exact', { gate: 'exact' }],
    ['paired a=0.05', { gate: 'paired', gate_alpha: 0.05 }],
    ['paired a=0.05 x3', { gate: 'paired', gate_alpha: 0.05, gate_repeats: 3 }],
    ['paired a=0.2', { gate: 'paired', gate_alpha: 0.2 }],
  ];
  console.log(`# Gates on 30 selection items, ${SEEDS} seeds each: share of seeds on which the candidate is taken in`);
  for (const noise of [0.05, 0.1, 0.2]) {
    console.log(`\nnoise=${noise}`);
    console.log(
      ['gate'.padEnd(18), ...cases.map(([name]) => name.padStart(14)), 'rollouts/decision'.padStart(19)].join(''),
    );
    for (const [name, gate] of configs) {
      const row = [name.padEnd(18)];
      let rollouts = 0;
      for (const [, current, candidate] of cases) {
        const r = await acceptRate(current, candidate, gate, noise);
        row.push(pct(r.accepted, SEEDS).padStart(14));
        rollouts += r.rollouts;
      }
      row.push((rollouts / (SEEDS * cases.length)).toFixed(1).padStart(19));
      console.log(row.join(''));
    }
  }
}

interface RunFigures {
  testHard: number;
  calls: number;
}

async function train(overrides: string[]): Promise<RunFigures> {
  const config = path.resolve(import.meta.dirname, '../configs/sim/default.yaml');
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-gate-')), 'run');
  const loaded = loadConfig(config, { overrides: [ownSeals(out), ...overrides], environment: {} });
  const outcome = await runTraining({ loaded, outRoot: out, configFile: config, console: false });
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  if (outcome.status !== 'finished') throw new Error(`run ${overrides.join(' ')}: ${outcome.status}`);
  const s = outcome.summary as { test_hard: number; provider_calls: number };
  return { testHard: s.test_hard, calls: s.provider_calls };
}

async function pools(): Promise<void> {
  const variants: [string, string[]][] = [
    ['single skill', []],
    ['pool 3', ['optimizer.pool_size=3']],
    ['pool 3 + merge', ['optimizer.pool_size=3', 'optimizer.pool_merge=true']],
    ['pool 5 + merge', ['optimizer.pool_size=5', 'optimizer.pool_merge=true']],
  ];
  const common = ['optimizer.learning_rate=2', 'optimizer.min_learning_rate=1'];
  for (const noise of [0, 0.1]) {
    console.log(
      `\n# Pool against the single-skill loop: ${RUNS} seeds, sim defaults with learning_rate=2, noise=${noise}`,
    );
    console.log(
      [
        'variant'.padEnd(18),
        'mean test'.padStart(10),
        'x single'.padStart(10),
        'wins/ties/losses'.padStart(18),
        'calls x single'.padStart(16),
      ].join(''),
    );
    const results: RunFigures[][] = [];
    for (const [, extra] of variants) {
      const runs: RunFigures[] = [];
      for (let seed = 1; seed <= RUNS; seed++)
        runs.push(await train([...common, ...extra, `train.seed=${seed}`, `model.target.options.noise=${noise}`]));
      results.push(runs);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const single = results[0]!;
    variants.forEach(([name], v) => {
      const runs = results[v]!;
      const test = mean(runs.map((r) => r.testHard));
      const wins = runs.filter((r, i) => r.testHard > single[i]!.testHard).length;
      const losses = runs.filter((r, i) => r.testHard < single[i]!.testHard).length;
      const calls = mean(runs.map((r) => r.calls)) / mean(single.map((r) => r.calls));
      const ratio = test / mean(single.map((r) => r.testHard));
      console.log(
        [
          name.padEnd(18),
          test.toFixed(3).padStart(10),
          ratio.toFixed(3).padStart(10),
          `${wins}/${RUNS - wins - losses}/${losses}`.padStart(18),
          calls.toFixed(3).padStart(16),
        ].join(''),
      );
    });
  }
}

await gates();
await pools();
