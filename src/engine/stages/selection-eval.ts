/**
 * Scoring a skill on the selection split, for the gate. Each item's result comes from the score
 * cache when this skill was already run on it. With a bar (the current score), items are run
 * hardest first (those the current skill failed) and evaluation stops as soon as the candidate
 * cannot beat the bar: the decision is the one a full evaluation would give.
 */
import type { Trajectory } from '../../envs/types.ts';
import { skillHash } from '../../skill/document.ts';
import type { RunContext } from '../context.ts';
import { rejectIsCertain } from './gate.ts';
import { rollout, writeRolloutDir } from './rollout.ts';
import { computeScore, gateBonus, gateScore, itemMetric } from '../scoring/metrics.ts';

export interface SelectionScore {
  trajectories: (Trajectory | undefined)[];
  /** Means over the scored items (null when stopped early). */
  hard: number | null;
  soft: number | null;
  /** The gate score; for an early stop, the best score the candidate could still have reached. */
  gate: number;
  complete: boolean;
  /** Rollouts run now, and rollouts not needed (cached or skipped). */
  used: number;
  saved: number;
  cacheHits: number;
  errors: number;
}

/** Share of selection items that may end in infrastructure errors before the evaluation is refused. */
export const MAX_ERROR_SHARE = 0.1;

/** Runs the items that ended in infrastructure errors once more (errors are never cached). */
async function retryErrors(ctx: RunContext, skill: string, trajectories: (Trajectory | undefined)[]): Promise<void> {
  const failed = trajectories.flatMap((t, i) => (t?.error ? [i] : []));
  if (failed.length === 0) return;
  const again = await rollout({
    env: ctx.env,
    target: ctx.models.target,
    judge: ctx.models.judge,
    skill,
    items: failed.map((i) => ctx.selection[i]!),
    limit: ctx.rolloutLimit,
    cache: ctx.scores,
    seed: ctx.config.train.seed,
  });
  failed.forEach((i, k) => {
    const t = again.trajectories[k];
    if (t && !t.error) trajectories[i] = t;
  });
}

export async function scoreOnSelection(
  ctx: RunContext,
  skill: string,
  options: { dir?: string; bar?: number; currentSkill?: string; stage?: { step: number } } = {},
): Promise<SelectionScore> {
  const items = ctx.selection;
  const s = ctx.scoring;
  const bonus = gateBonus(skill, s);
  let order: number[] | undefined;
  if (options.bar !== undefined && options.currentSkill !== undefined) {
    const currentHash = skillHash(options.currentSkill);
    const known = items.map((item) => ctx.scores.get(currentHash, item.id, ctx.models.target.id, 0, ctx.config.train.seed));
    const value = (i: number) => {
      const t = known[i];
      return t && !t.error ? itemMetric(t.hard, t.soft, s.metric, s.mixedWeight) : 1;
    };
    order = items.map((_, i) => i).sort((a, b) => value(a) - value(b) || a - b);
  }
  // The stop is decided on the longest run of finished items in `order`, never on which items
  // happen to finish first, so that where it stops (and the bound it reports) is reproducible.
  const sequence = order ?? items.map((_, i) => i);
  const known: (Trajectory | undefined)[] = new Array(items.length).fill(undefined);
  let prefix = 0;
  let sum = 0;
  let scored = 0;
  const bar = options.bar;
  const certain = () => bar !== undefined && rejectIsCertain(sum, scored, items.length - prefix, bar, bonus);
  const result = await rollout({
    env: ctx.env,
    target: ctx.models.target,
    judge: ctx.models.judge,
    skill,
    items,
    limit: ctx.rolloutLimit,
    cache: ctx.scores,
    seed: ctx.config.train.seed,
    order: sequence,
    onResult: (t, index) => {
      known[index] = t;
      while (prefix < sequence.length && known[sequence[prefix]!] && !certain()) {
        const next = known[sequence[prefix]!]!;
        prefix++;
        if (next.error) continue;
        scored++;
        sum += itemMetric(next.hard, next.soft, s.metric, s.mixedWeight);
      }
    },
    stop: bar === undefined ? undefined : certain,
    onProgress: options.stage ? (done, total) => ctx.events.emit({ type: 'stage_progress', step: options.stage!.step, stage: 'evaluate', done, total }) : undefined,
  });
  const complete = prefix === items.length;
  if (complete) await retryErrors(ctx, skill, result.trajectories);
  if (options.dir) writeRolloutDir(options.dir, result.trajectories, skillHash(skill), ctx.models.target.id, 0);
  const finished = result.trajectories.filter((t): t is Trajectory => t !== undefined);
  const score = computeScore(finished);
  if (score.errors > MAX_ERROR_SHARE * items.length) {
    const first = finished.find((t) => t.error)!.error!;
    throw new Error(
      `the selection evaluation failed on ${score.errors} of ${items.length} items (${first.kind}: ${first.message}); ` +
        'a score over the rest would not be trustworthy. Check the target model and its endpoint, then resume the run',
    );
  }
  const remaining = items.length - prefix;
  const gate = complete ? gateScore(finished, skill, s) : (sum + remaining) / (scored + remaining) + bonus;
  return {
    trajectories: result.trajectories,
    hard: complete ? score.hard : null,
    soft: complete ? score.soft : null,
    gate,
    complete,
    used: result.ran,
    saved: items.length - result.ran,
    cacheHits: result.cached,
    errors: score.errors,
  };
}
