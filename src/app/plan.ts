/**
 * The dry-run planner: how many model calls a training run will make, per stage, with their
 * tokens and cost, from the config, the split sizes, the sizes of the skill, the data and the
 * prompts, and the price table. Pure: it calls nothing. The counts follow the reference's cost
 * model (training-engine.md §22); where the run depends on answers not known yet (how many
 * rollouts fail, whether the gate stops early), it assumes what is stated in `assumptions`, and
 * selection counts are upper bounds (the score cache and the gate's early stop only save).
 */
import type { Config, Price } from '../config/schema.ts';
import { BATCH_DISCOUNT, costOf, priceOf } from '../model/prices.ts';
import { alignRows } from '../util/align-rows.ts';
import { gateOverlapOn } from '../engine/settings.ts';
import type { AgentOverhead } from './agent-overhead.ts';

export interface PlanInput {
  config: Config;
  sizes: { train: number; val: number; test: number };
  /** Mean tokens of one item as shown to the target (question and context). */
  itemTokens: number;
  skillTokens: number;
  /** At most this many target calls one rollout makes (an env's turn limit); 1 when absent. */
  targetCallsPerRollout?: number;
  /** An agent CLI as the target: what one of its runs takes (`agent-overhead.ts`). */
  agent?: AgentOverhead;
  /** Tokens of the optimizer's system prompts, by stage. */
  promptTokens: Partial<
    Record<'analyst' | 'merge' | 'ranking' | 'rewrite' | 'slow_update' | 'meta_skill' | 'lr_autonomous', number>
  >;
}

export interface StagePlan {
  stage: string;
  role: 'target' | 'optimizer';
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** USD; null when the role's price is unknown. */
  costUsd: number | null;
  upperBound?: boolean;
  /** Sent as batches (`model.target.batch`): priced at the batch discount. */
  batch?: boolean;
}

export interface Plan {
  epochs: number;
  stepsPerEpoch: number;
  totalSteps: number;
  selection: number;
  test: number;
  stages: StagePlan[];
  total: { calls: number; inputTokens: number; outputTokens: number; costUsd: number; unpricedStages: string[] };
  prices: Record<'target' | 'optimizer', { model: string; price: Price | undefined }>;
  assumptions: string[];
}

export type PlanTotal = Plan['total'];
export type RolePrices = Plan['prices'];

/** Calls counted per stage (`add`), then priced at the roles' prices into stages and a total. */
export function stageCounter() {
  const counts = new Map<
    string,
    { role: StagePlan['role']; calls: number; input: number; cached: number; output: number; upperBound: boolean }
  >();
  const batched = new Set<string>();
  const add = (
    stage: string,
    role: StagePlan['role'],
    calls: number,
    inputPerCall: number,
    outputPerCall: number,
    upperBound = false,
    cachedPerCall = 0,
  ): void => {
    if (calls <= 0) return;
    const s = counts.get(stage) ?? { role, calls: 0, input: 0, cached: 0, output: 0, upperBound };
    s.calls += calls;
    s.input += Math.round(calls * inputPerCall);
    s.cached += Math.round(calls * cachedPerCall);
    s.output += Math.round(calls * outputPerCall);
    counts.set(stage, s);
  };
  const priced = (prices: RolePrices): { stages: StagePlan[]; total: PlanTotal } => {
    const stages: StagePlan[] = [];
    const total: PlanTotal = { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, unpricedStages: [] };
    for (const [stage, s] of counts) {
      const live = costOf({ input: s.input, output: s.output, cached: s.cached, reasoning: 0 }, prices[s.role].price);
      const batch = batched.has(stage);
      const costUsd = live === null || !batch ? live : live * BATCH_DISCOUNT;
      stages.push({
        stage,
        role: s.role,
        calls: s.calls,
        inputTokens: s.input,
        outputTokens: s.output,
        costUsd,
        ...(s.upperBound ? { upperBound: true } : {}),
        ...(batch ? { batch: true } : {}),
      });
      total.calls += s.calls;
      total.inputTokens += s.input;
      total.outputTokens += s.output;
      if (costUsd === null) total.unpricedStages.push(stage);
      else total.costUsd += costUsd;
    }
    return { stages, total };
  };
  /** The stage's calls go as batches. */
  const batch = (stage: string) => batched.add(stage);
  return { add, batch, priced };
}

const num = (n: number) => Math.round(n).toLocaleString('en-US');
const usd = (n: number | null) => (n === null ? 'unknown' : `$${n < 10 ? n.toFixed(4) : n.toFixed(2)}`);

/** The cost table (aligned lines) and a line per role with its price; `estimate` marks an upper bound or a guess. */
export function costLines(
  plan: { stages: StagePlan[]; total: PlanTotal; prices: RolePrices },
  estimate: string,
): { table: string[]; prices: string[] } {
  const t = plan.total;
  const rows = [
    ['stage', 'role', 'calls', 'input tok', 'output tok', 'cost'],
    ...plan.stages.map((s) => [
      s.stage + (s.batch ? ' (batch)' : '') + (s.upperBound ? ` (${estimate})` : ''),
      s.role,
      num(s.calls),
      num(s.inputTokens),
      num(s.outputTokens),
      usd(s.costUsd),
    ]),
    [
      'total',
      '',
      num(t.calls),
      num(t.inputTokens),
      num(t.outputTokens),
      t.unpricedStages.length ? `${usd(t.costUsd)} + unknown` : usd(t.costUsd),
    ],
  ];
  const prices = (['target', 'optimizer'] as const).map((role) => {
    const p = plan.prices[role];
    return `${role} ${p.model}: ${p.price ? `$${p.price.input} in / $${p.price.output} out per 1M tokens` : `price unknown (set model.${role}.price: {input: …, output: …} in USD per 1M tokens)`}`;
  });
  return { table: alignRows(rows, 2), prices };
}

/** Share of a training batch assumed to fail (reflection splits failures and successes). */
const FAIL_SHARE = 0.5;
/** Output tokens assumed per call of each kind. */
const OUTPUT = {
  rollout: 200,
  analyst: 1200,
  merge: 900,
  ranking: 150,
  lr_autonomous: 150,
  rewrite_extra: 200,
  slow_update: 800,
  meta_skill: 800,
};
/** Tokens a trajectory takes in an optimizer prompt beyond its item (answer, expected, feedback). */
const TRAJECTORY_EXTRA = 250;

/** Merge calls for `k` patches merged `p` at a time, level by level, until one remains. */
export function mergeCalls(k: number, p: number): number {
  let calls = 0;
  while (k >= 2) {
    const groups = Math.ceil(k / p);
    calls += k <= p ? 1 : Math.floor(k / p) + (k % p >= 2 ? 1 : 0);
    k = k <= p ? 1 : groups;
  }
  return calls;
}

/**
 * Merge calls of the combined strategy for `f` failure and `s` success patches, `p` at a time:
 * each kind reduced level by level (the larger first) only until both fit in one group, then one
 * top merge of what is left (none when a single patch is left).
 */
export function combinedMergeCalls(f: number, s: number, p: number): number {
  const size = Math.max(2, p);
  let calls = 0;
  const level = (k: number) => {
    calls += Math.floor(k / size) + (k % size >= 2 ? 1 : 0);
    return Math.ceil(k / size);
  };
  while (f + s > size) {
    const failureFirst = f >= s;
    const reduceF = f > 1 && (failureFirst || Math.ceil(s / size) + f > size);
    const reduceS = s > 1 && (!failureFirst || Math.ceil(f / size) + s > size);
    if (reduceF) f = level(f);
    if (reduceS) s = level(s);
  }
  return calls + (f + s >= 2 ? 1 : 0);
}

/**
 * The steps of one epoch, by size: batches of `batch` over `train`, `accumulation` batches a
 * step. All but the last are full, so there are at most two sizes; a plan's work is the same for
 * ten steps as for ten billion.
 */
function stepGroups(train: number, batch: number, accumulation: number): { size: number; steps: number }[] {
  const per = batch * accumulation;
  const full = Math.floor(train / per);
  const rest = train - full * per;
  return [...(full > 0 ? [{ size: per, steps: full }] : []), ...(rest > 0 ? [{ size: rest, steps: 1 }] : [])];
}

export function planRun(input: PlanInput): Plan {
  const { config, sizes, itemTokens, skillTokens } = input;
  const c = config;
  const selection = c.evaluation.sel_env_num > 0 ? Math.min(c.evaluation.sel_env_num, sizes.val) : sizes.val;
  const test = c.evaluation.eval_test
    ? c.evaluation.test_env_num > 0
      ? Math.min(c.evaluation.test_env_num, sizes.test)
      : sizes.test
    : 0;
  const train = c.train.train_size > 0 ? Math.min(c.train.train_size, sizes.train) : sizes.train;
  const groups = stepGroups(train, c.train.batch_size, c.train.accumulation);
  const stepsPerEpoch = groups.reduce((n, g) => n + g.steps, 0);
  const epochs = c.train.num_epochs;
  const M = c.gradient.minibatch_size;
  const P = c.gradient.merge_batch_size;
  const mode = c.optimizer.skill_update_mode;
  const rewrite = /rewrite|suggestion/.test(mode) && !/minibatch/.test(mode);
  const combined = c.gradient.merge_strategy === 'combined';
  const autonomous =
    ['autonomous', 'auto', 'optimizer'].includes(c.optimizer.lr_control_mode) ||
    c.optimizer.lr_scheduler === 'autonomous';
  const prompt = (k: keyof PlanInput['promptTokens']) => input.promptTokens[k] ?? 600;
  const rolloutIn = skillTokens + itemTokens + 30;
  const trajectory = itemTokens + TRAJECTORY_EXTRA;

  const { add, batch, priced } = stageCounter();
  if (c.model.target.batch) {
    batch('test');
    if (c.model.target.batch_baseline) batch('baseline');
  }
  // Target stages count rollouts times the calls each may make; selection items are sampled gate_repeats times.
  const turns = Math.max(1, input.targetCallsPerRollout ?? 1);
  const repeats = c.evaluation.gate_repeats;
  const agent = input.agent;
  const rollouts = (stage: string, n: number, upperBound = false) =>
    agent
      ? add(stage, 'target', n, agent.input, agent.output, upperBound, agent.cached)
      : add(stage, 'target', n * turns, rolloutIn, OUTPUT.rollout, upperBound || turns > 1);

  rollouts('baseline', selection * repeats);
  // The most calls one step makes before its gate: what a wrong guess of the gate overlap can waste.
  let stepAhead = 0;
  // Each size of step, counted once and multiplied by how many such steps the run has.
  for (const { size: n, steps } of groups) {
    const times = steps * epochs;
    rollouts('rollout', n * times);
    // At most: the split between failures and successes that needs the most minibatches.
    const failures = c.gradient.failure_only ? n : Math.max(1, Math.round(n * FAIL_SHARE));
    const failMinibatches = Math.ceil(failures / M);
    const succMinibatches = c.gradient.failure_only
      ? 0
      : Math.min(n - failures, Math.ceil(n / M) + 1 - failMinibatches);
    add(
      'analyst',
      'optimizer',
      (failMinibatches + succMinibatches) * times,
      prompt('analyst') + skillTokens + M * trajectory,
      OUTPUT.analyst,
      true,
    );
    const merges = combined
      ? combinedMergeCalls(failMinibatches, succMinibatches, P)
      : mergeCalls(failMinibatches, P) + mergeCalls(succMinibatches, P) + (failMinibatches && succMinibatches ? 1 : 0);
    add(
      'merge',
      'optimizer',
      merges * times,
      prompt('merge') + skillTokens + Math.min(P, Math.max(failMinibatches, succMinibatches)) * OUTPUT.analyst,
      OUTPUT.merge,
    );
    stepAhead = Math.max(stepAhead, n * turns + failMinibatches + succMinibatches + merges);
    if (autonomous)
      add('lr_autonomous', 'optimizer', times, prompt('lr_autonomous') + skillTokens + 600, OUTPUT.lr_autonomous);
    // The combined top merge ranks within a budget known before it (a scheduled learning rate).
    if (autonomous || (!combined && c.optimizer.learning_rate > 0))
      add('ranking', 'optimizer', times, prompt('ranking') + skillTokens + 800, OUTPUT.ranking, true);
    if (rewrite)
      add('rewrite', 'optimizer', times, prompt('rewrite') + skillTokens + 800, skillTokens + OUTPUT.rewrite_extra);
    if (c.evaluation.use_gate) rollouts('selection', selection * repeats * times, true);
  }
  // The epoch boundaries from the second epoch's end on.
  const boundaries = Math.max(0, epochs - 1);
  if (boundaries > 0) {
    const N = Math.min(c.optimizer.slow_update_samples, train);
    const pairsIn = prompt('slow_update') + 2 * skillTokens + N * (2 * trajectory);
    if (c.optimizer.use_slow_update || c.optimizer.use_meta_skill)
      rollouts('slow_update_rollout', 2 * N * boundaries, true);
    if (c.optimizer.use_slow_update) {
      add('slow_update', 'optimizer', boundaries, pairsIn, OUTPUT.slow_update);
      if (c.optimizer.slow_update_gate_with_selection && c.evaluation.use_gate)
        rollouts('selection', selection * repeats * boundaries, true);
    }
    if (c.optimizer.use_meta_skill)
      add(
        'meta_skill',
        'optimizer',
        boundaries,
        prompt('meta_skill') + pairsIn - prompt('slow_update'),
        OUTPUT.meta_skill,
      );
  }
  rollouts('final_selection', selection * repeats, true);
  rollouts('test', 3 * test, true);
  // The audit's probes: variants of an accept's improved items under both skills, every step and the best skill at the end.
  const { audit } = c.evaluation;
  const probing = audit.checks.includes('probes');
  if (probing) rollouts('audit_probes', 2 * audit.probes.items * (stepsPerEpoch * epochs + 1), true);
  // A skill the slow update took without scoring it has its selection rollouts run for the audit of the next accept.
  const gainChecked = probing || audit.checks.includes('second_scorer');
  if (gainChecked && c.optimizer.use_slow_update && !c.optimizer.slow_update_gate_with_selection)
    rollouts('audit_reference', selection * repeats * boundaries, true);

  const prices = {
    target: { model: c.model.target.model, price: priceOf(c.model.target.model, c.model.target.price) },
    optimizer: { model: c.model.optimizer.model, price: priceOf(c.model.optimizer.model, c.model.optimizer.price) },
  };
  // The sim backend is free.
  for (const role of ['target', 'optimizer'] as const)
    if (c.model[role].backend === 'sim') prices[role].price = { input: 0, output: 0 };

  const { stages, total } = priced(prices);
  return {
    epochs,
    stepsPerEpoch,
    totalSteps: stepsPerEpoch * epochs,
    selection,
    test,
    stages,
    total,
    prices,
    assumptions: [
      `reflection: failures and successes in minibatches of ${M}, counted at the most minibatches any split of a batch can need; merge and prompt sizes as if half of each batch fails`,
      `every step proposes more edits than the learning rate allows (${combined && !autonomous ? 'the top merge ranks them' : 'one ranking call'}) and changes the skill (a full selection evaluation; the score cache and the gate's early stop only lower this)`,
      `the final selection evaluation runs (it is skipped when the final skill is the best one), and three test evaluations (initial, best, final)`,
      `output tokens per call: rollout ${OUTPUT.rollout}, analyst ${OUTPUT.analyst}, merge ${OUTPUT.merge}, ranking ${OUTPUT.ranking}, slow update and meta skill ${OUTPUT.slow_update}`,
      `prompts keep the initial skill's size (${skillTokens} tokens); an item is ${itemTokens} tokens on average`,
      `no response-cache or provider prompt-cache savings`,
      ...(agent
        ? [
            `an agent run of the target takes ${agent.input.toLocaleString('en')} input tokens (${agent.cached.toLocaleString('en')} of them from the provider's prompt cache) and ${agent.output} output tokens: ${agent.source}`,
          ]
        : turns > 1
          ? [`every rollout runs to the env's turn limit: ${turns} target calls, each the size of the first`]
          : []),
      ...(repeats > 1 ? [`each selection item is sampled ${repeats} times (evaluation.gate_repeats)`] : []),
      ...(gateOverlapOn(c) && c.evaluation.use_gate
        ? [
            `not counted: the gate overlap (evaluation.gate_overlap) runs the next step ahead, and each wrong guess of the gate wastes what it ran, at most ${stepAhead.toLocaleString('en')} calls (a step's rollouts, analysts and merges); measured at 2 to 12% of a run's calls`,
          ]
        : []),
      ...(probing ? [`every step's candidate is accepted and probed (evaluation.audit.probes)`] : []),
      ...(audit.checks.includes('second_scorer')
        ? [
            `not counted: the judge calls of the audit's second scorer, where it is the judge (two per decided item, at most ${2 * audit.second_scorer.max_items} per accept)`,
          ]
        : []),
      ...(c.evaluation.transfer_targets.length
        ? [`the transfer targets' calls (evaluation.transfer_targets) are not counted`]
        : []),
    ],
  };
}

export function formatPlan(plan: Plan): string {
  const cost = costLines(plan, 'at most');
  const lines = [
    'Dry run: nothing is called and nothing is spent.',
    `${plan.epochs} epoch(s) x ${plan.stepsPerEpoch} step(s) = ${plan.totalSteps} steps; selection ${plan.selection} items, test ${plan.test} items`,
    '',
    ...cost.table,
    '',
    ...cost.prices,
  ];
  lines.push('', 'Assumed:', ...plan.assumptions.map((a) => `  - ${a}`));
  return lines.join('\n');
}
