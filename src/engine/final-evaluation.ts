/**
 * After the last epoch: the final skill is validated (and promoted to best if it beats it),
 * then the initial, best and final skills are scored on the held-out test split, and
 * `summary.json` is written.
 */
import path from 'node:path';
import { VERSION } from '../version.ts';
import type { Item, Trajectory } from '../envs/types.ts';
import { type CacheShare, sumUsage } from '../model/ledger.ts';
import type { Summary, Transfer } from '../run/records.ts';
import { packageHash, type SkillPackage } from '../skill/package/package.ts';
import { isAccepted, isRejected, isSkipped } from '../run/records.ts';
import { persistState } from './checkpoint.ts';
import type { RunContext, TrainState } from './context.ts';
import { round } from '../util/round.ts';
import { computeScore } from './scoring/means.ts';
import { applyDecision, decide } from './stages/gate.ts';
import { lengthRule } from './stages/gate-evaluation.ts';
import { lengthTable, scoreVsLength } from './length-report.ts';
import { gainWorth } from './gain-cost.ts';
import { type TaskCost, taskCost } from './task-cost.ts';
import { type SealNote, testUnderSeal } from './test-seal.ts';
import { auditSummary, bestGainChecks } from './best-audit.ts';

export interface Bucket {
  total: number;
  /** Sum of hard scores. */
  hard: number;
  hard_acc: number;
  soft: number;
  errors: number;
}

/** Scores per task type, plus `overall`. */
export function buckets(
  items: Item[],
  trajectories: (Trajectory | undefined)[],
  types: string[] = [],
): Record<string, Bucket> {
  const groups = new Map<string, Trajectory[]>([
    ['overall', []],
    ...types.map((t) => [t, []] as [string, Trajectory[]]),
  ]);
  trajectories.forEach((t, i) => {
    if (!t) return;
    const type = t.taskType ?? items[i]?.type ?? 'other';
    groups.get('overall')!.push(t);
    if (!groups.has(type)) groups.set(type, []);
    groups.get(type)!.push(t);
  });
  const out: Record<string, Bucket> = {};
  for (const [type, ts] of groups) {
    const s = computeScore(ts);
    out[type] = {
      total: s.n,
      hard: round(s.hard * s.n, 6),
      hard_acc: round(s.hard, 6),
      soft: round(s.soft, 6),
      errors: s.errors,
    };
  }
  return out;
}

type FinalContext = Pick<
  RunContext,
  | 'audit'
  | 'dir'
  | 'events'
  | 'settings'
  | 'rollouts'
  | 'batchRollouts'
  | 'selection'
  | 'test'
  | 'env'
  | 'skillInit'
  | 'ledger'
  | 'clock'
  | 'recordedConfig'
  | 'transfer'
  | 'stop'
>;

interface Tested {
  buckets: Record<string, Bucket>;
  cost?: TaskCost;
  seal?: SealNote;
}

/** `skill` on the test split (or its sealed figure: `test-seal.ts`), written to `dirName/summary.json`. */
async function testSkill(ctx: FinalContext, skill: SkillPackage, dirName: string, what: string): Promise<Tested> {
  const dir = ctx.dir.path(dirName);
  const tested = await testUnderSeal(ctx, skill, what, async () => {
    const r = await (ctx.batchRollouts ?? ctx.rollouts).run(skill, ctx.test, { dir });
    const b = buckets(ctx.test, r.trajectories, ctx.env.taskTypes?.() ?? []);
    return { buckets: b, cost: taskCost(r.trajectories, ctx.settings.targetPrice), trajectories: r.trajectories };
  });
  ctx.dir.writeJson(path.join(dir, 'summary.json'), tested.buckets);
  return tested as Tested;
}

function table(title: string, b: Record<string, Bucket>): string {
  const rows = Object.entries(b).map(
    ([type, v]) => `    ${type.padEnd(40)}: hard=${v.hard}/${v.total}=${v.hard_acc.toFixed(4)}`,
  );
  return [`  ${title}`, ...rows].join('\n');
}

export async function finalEvaluation(
  ctx: FinalContext,
  state: TrainState,
): Promise<Summary & Record<string, unknown>> {
  const { settings, events } = ctx;
  persistState(ctx, state);
  let finalSelection: number | null = null;
  let finalSelectionSoft: number | null = null;
  let tests: { baseline?: Record<string, Bucket>; best?: Record<string, Bucket>; final?: Record<string, Bucket> } = {};
  let costs: { initial?: TaskCost; best?: TaskCost } = {};
  let seals: Record<string, SealNote | undefined> = {};

  if (settings.evalTest) {
    const started = performance.now();
    events.emit({
      type: 'stage_started',
      step: state.lastStep,
      epoch: settings.epochs,
      stage: 'final_evaluation',
      detail: `test items=${ctx.test.length}`,
    });
    // The final skill on selection (free when it is the best: its results are cached).
    const sel = await ctx.selection.score(state.current, { dir: ctx.dir.path('final_selection_eval') });
    finalSelection = sel.hard;
    finalSelectionSoft = sel.soft;
    if (packageHash(state.current) !== packageHash(state.best)) {
      const length = lengthRule(ctx, state.current, { current: state.current, best: state.best });
      const decision = decide(sel.gate, { current: state.current.score, best: state.best.score }, 'promote', {
        length,
      });
      if (decision.newBest) {
        events.info(
          `[promote] the final skill beats the best on selection (${sel.gate.toFixed(4)} vs ${state.best.score.toFixed(4)})`,
        );
        applyDecision(state, { ...state.current, score: sel.gate }, decision, state.lastStep);
        persistState(ctx, state);
      }
    }
    const same = packageHash(state.current) === packageHash(state.best);
    const [baseline, best, final] = await Promise.all([
      testSkill(ctx, ctx.skillInit, 'test_eval_baseline', 'initial skill'),
      testSkill(ctx, state.best, 'test_eval', 'best skill'),
      same ? Promise.resolve(undefined) : testSkill(ctx, state.current, 'test_eval_final', 'final skill'),
    ]);
    seals = { initial: baseline.seal, best: best.seal, final: final?.seal };
    if (same) ctx.dir.writeJson(ctx.dir.path('test_eval_final', 'summary.json'), best.buckets);
    tests = { baseline: baseline.buckets, best: best.buckets, final: (final ?? best).buckets };
    costs = { initial: baseline.cost, best: best.cost };
    events.emit({
      type: 'stage_finished',
      step: state.lastStep,
      epoch: settings.epochs,
      stage: 'final_evaluation',
      seconds: (performance.now() - started) / 1000,
      detail: `hard score on ${ctx.test.length} test items, per task type:\n${table('[1] initial skill', baseline.buckets)}\n${table(`[2] best on selection (step ${state.best.step})`, best.buckets)}\n${table('[3] final skill', tests.final!)}`,
    });
  }

  const gainChecks = await bestGainChecks(ctx, state);
  const h = state.history;
  const overall = (b?: Record<string, Bucket>) => (b ? b.overall!.hard_acc : null);
  const overallSoft = (b?: Record<string, Bucket>) => (b ? b.overall!.soft : null);
  const epochs = [...new Set(h.map((r) => r.epoch))];
  const tokenSummary = ctx.ledger.byPurpose(0);
  const totals = ctx.ledger.totals();
  const summary: Summary & Record<string, unknown> = {
    version: `skillopt-${VERSION}`,
    status: 'finished',
    config: ctx.recordedConfig,
    baseline_selection_hard: state.baselineScore,
    best_selection_hard: state.best.score,
    // Means over the selection split (not the gate's metric, unlike best_selection_hard).
    final_selection_hard: finalSelection,
    final_selection_soft: finalSelectionSoft,
    best_step: state.best.step,
    current_origin: state.current.origin,
    best_origin: state.best.origin,
    total_steps: h.length,
    total_accepts: h.filter((r) => isAccepted(r.action)).length,
    total_rejects: h.filter((r) => isRejected(r.action)).length,
    total_skips: h.filter((r) => isSkipped(r.action)).length,
    epoch_stats: epochs.map((e) => {
      const rs = h.filter((r) => r.epoch === e);
      return {
        epoch: e,
        steps: rs.map((r) => r.step),
        accepts: rs.filter((r) => isAccepted(r.action)).length,
        rejects: rs.filter((r) => isRejected(r.action)).length,
        skips: rs.filter((r) => isSkipped(r.action)).length,
        best_score_at_epoch_end: rs.at(-1)?.best_score ?? null,
        current_score_at_epoch_end: rs.at(-1)?.current_score ?? null,
      };
    }),
    baseline_test_hard: overall(tests.baseline),
    baseline_test_soft: overallSoft(tests.baseline),
    test_hard: overall(tests.best),
    test_soft: overallSoft(tests.best),
    final_test_hard: overall(tests.final),
    final_test_soft: overallSoft(tests.final),
    test_delta_hard: tests.best && tests.baseline ? round(overall(tests.best)! - overall(tests.baseline)!, 6) : null,
    final_test_delta_hard:
      tests.final && tests.baseline ? round(overall(tests.final)! - overall(tests.baseline)!, 6) : null,
    selection_rollouts_used: h.reduce((n, r) => n + (r.gate?.rollouts_used ?? 0), 0),
    selection_rollouts_saved: h.reduce((n, r) => n + (r.gate?.rollouts_saved ?? 0), 0),
    total_wall_time_s: round(ctx.clock.elapsedSeconds(), 1),
    token_summary: { ...tokenSummary, _total: sumUsage(tokenSummary) },
    provider_calls: totals.calls,
    cost_usd: totals.unpricedCalls > 0 ? null : round(totals.costUsd, 6),
    unpriced_calls: totals.unpricedCalls,
    prompt_cache: ctx.ledger.cacheShares(),
    ...auditSummary(ctx, state, seals, gainChecks),
  };
  const worth = gainWorth(costs, {
    usd: summary.cost_usd as number | null,
    wallTimeS: summary.total_wall_time_s as number,
    gain: summary.test_delta_hard as number | null,
  });
  if (worth) {
    summary.cost_per_task = { initial: costs.initial, best: costs.best };
    summary.gain_cost = worth.report;
    events.info(worth.line);
  }
  if (ctx.transfer) {
    const started = performance.now();
    const targets = settings.transferTargets.join(', ');
    events.emit({
      type: 'stage_started',
      step: state.lastStep,
      epoch: settings.epochs,
      stage: 'transfer',
      detail: `initial and best skills on ${targets}`,
    });
    const transfer = await ctx.transfer({ initial: ctx.dir.skill(0), best: ctx.dir.bestSkill });
    summary.transfer = transfer;
    const line = (r: Transfer['rows'][number]) =>
      `${r.target}: initial ${r.initial.hard.toFixed(4)} -> best ${r.best.hard.toFixed(4)} (diff ${r.hard.diff >= 0 ? '+' : ''}${r.hard.diff.toFixed(4)}, p ${r.hard.p ?? '-'})`;
    events.emit({
      type: 'stage_finished',
      step: state.lastStep,
      epoch: settings.epochs,
      stage: 'transfer',
      seconds: (performance.now() - started) / 1000,
      detail: transfer.rows.map(line).join('\n'),
    });
  }
  const cacheLine = promptCacheLine(summary.prompt_cache as ReturnType<typeof ctx.ledger.cacheShares>);
  if (cacheLine) events.info(cacheLine);
  const lengths = scoreVsLength(ctx, state);
  ctx.dir.writeJson(ctx.dir.path('score_vs_length.json'), lengths);
  if (settings.gate.shorterWithin !== undefined) events.info(lengthTable(lengths));
  ctx.dir.writeJson(ctx.dir.summary, summary);
  persistState(ctx, state, 'finished');
  events.emit({
    type: 'run_finished',
    best_step: state.best.step,
    best_score: state.best.score,
    baseline_test: summary.baseline_test_hard as number | null,
    best_test: summary.test_hard as number | null,
    final_test: summary.final_test_hard as number | null,
    seconds: summary.total_wall_time_s as number,
  });
  return summary;
}

/** "prompt cache: read 89% of the target's input (rollout 91%, gate 88%); 12% of the optimizer's input"; '' when nothing was. */
export function promptCacheLine(shares: Record<string, CacheShare & { by_stage: Record<string, CacheShare> }>): string {
  const pct = (s: CacheShare) => `${Math.round(s.share * 100)}%`;
  const parts = Object.entries(shares)
    .filter(([, s]) => s.cached > 0 || s.written > 0)
    .map(([role, s]) => {
      const stages = Object.entries(s.by_stage)
        .filter(([, st]) => st.input > 0)
        .map(([stage, st]) => `${stage} ${pct(st)}`);
      return `${pct(s)} of the ${role}'s input${stages.length > 1 ? ` (${stages.join(', ')})` : ''}`;
    });
  return parts.length ? `prompt cache: read ${parts.join('; ')}` : '';
}
