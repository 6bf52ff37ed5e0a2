/**
 * The longitudinal comparison of the epoch boundary: the same training items under the previous
 * and the current epoch's skill, rolled out and paired.
 */
import path from 'node:path';
import type { Item, Trajectory } from '../../envs/types.ts';
import { Rng } from '../../util/random.ts';
import type { RunContext } from '../context.ts';
import { sampleTrain } from '../batches.ts';
import { buildPairs, keepByPolicy, slimPairs } from './comparison-pairs.ts';
import type { ComparisonPair } from '../../protocol/optimizer.ts';
import { rollout } from '../stages/rollout.ts';
import { computeScore } from '../scoring/metrics.ts';

const present = (ts: (Trajectory | undefined)[]) => ts.filter((t): t is Trajectory => t !== undefined);

/** The same training items under two skills, paired; `changed` tops up until it has enough pairs. */
export async function comparePairs(ctx: RunContext, prevSkill: string, currSkill: string, epoch: number, base: string) {
  const n = ctx.config.optimizer.slow_update_samples;
  const seed = ctx.config.train.seed + epoch * 2000;
  const items = sampleTrain(ctx.splits.train, n, seed);
  const run = (skill: string, list: Item[], sub: string) =>
    rollout({ env: ctx.env, target: ctx.models.target, judge: ctx.models.judge, skill, items: list, limit: ctx.rolloutLimit, cache: ctx.scores, seed, dir: path.join(base, sub) });
  const [prev, curr] = await Promise.all([run(prevSkill, items, 'rollout_prev'), run(currSkill, items, 'rollout_curr')]);
  const all = buildPairs(items, prev.trajectories, curr.trajectories);
  let kept = keepByPolicy(all, ctx.pairPolicy);
  if (ctx.pairPolicy === 'changed' && kept.length < n) {
    const used = new Set(items.map((i) => i.id));
    const rest = new Rng(seed).shuffle(ctx.splits.train).filter((i) => !used.has(i.id));
    const chunk = Math.max(1, ctx.config.env.workers);
    for (let i = 0; i < rest.length && kept.length < n; i += chunk) {
      const more = rest.slice(i, i + chunk);
      const [p, c] = await Promise.all([run(prevSkill, more, 'rollout_prev/topup'), run(currSkill, more, 'rollout_curr/topup')]);
      const extra = buildPairs(more, p.trajectories, c.trajectories);
      all.push(...extra);
      kept = [...kept, ...keepByPolicy(extra, 'changed')];
    }
    kept = kept.slice(0, n);
  }
  return {
    pairs: kept,
    all,
    prevHard: computeScore(present(prev.trajectories)).hard,
    currHard: computeScore(present(curr.trajectories)).hard,
  };
}

export function savePairs(ctx: RunContext, base: string, pairs: ComparisonPair[], all: ComparisonPair[]): void {
  ctx.dir.writeJson(path.join(base, 'comparison_pairs.json'), slimPairs(pairs));
  if (ctx.pairPolicy !== 'mixed') ctx.dir.writeJson(path.join(base, 'comparison_pairs_all.json'), slimPairs(all));
}

/** The skill at the end of an epoch's boundary, as saved (the next epoch's starting skill). */
export function epochEndSkill(ctx: RunContext, epoch: number): string {
  return ctx.dir.readText(ctx.dir.skill(epoch * ctx.plan.stepsPerEpoch)) ?? ctx.skillInit;
}
