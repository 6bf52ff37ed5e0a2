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
import { computeScore } from '../scoring/means.ts';
import type { SkillPackage } from '../../skill/package/package.ts';
import { readSkillFile } from '../../run/skill-files.ts';

const present = (ts: (Trajectory | undefined)[]) => ts.filter((t): t is Trajectory => t !== undefined);

/** The same training items under two skills, paired; `changed` tops up until it has enough pairs. */
export async function comparePairs(
  ctx: Pick<RunContext, 'settings' | 'rollouts' | 'train'>,
  prevSkill: SkillPackage,
  currSkill: SkillPackage,
  epoch: number,
  base: string,
) {
  const { samples: n, pairPolicy, topUpChunk } = ctx.settings.epoch;
  const seed = ctx.settings.seed + epoch * 2000;
  const items = sampleTrain(ctx.train, n, seed);
  const run = (skill: SkillPackage, list: Item[], sub: string) =>
    ctx.rollouts.run(skill, list, { seed, dir: path.join(base, sub) });
  const [prev, curr] = await Promise.all([
    run(prevSkill, items, 'rollout_prev'),
    run(currSkill, items, 'rollout_curr'),
  ]);
  const all = buildPairs(items, prev.trajectories, curr.trajectories);
  let kept = keepByPolicy(all, pairPolicy);
  if (pairPolicy === 'changed' && kept.length < n) {
    const used = new Set(items.map((i) => i.id));
    const rest = new Rng(seed).shuffle(ctx.train).filter((i) => !used.has(i.id));
    const chunk = topUpChunk;
    for (let i = 0; i < rest.length && kept.length < n; i += chunk) {
      const more = rest.slice(i, i + chunk);
      const [p, c] = await Promise.all([
        run(prevSkill, more, 'rollout_prev/topup'),
        run(currSkill, more, 'rollout_curr/topup'),
      ]);
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

export function savePairs(
  ctx: Pick<RunContext, 'dir' | 'settings'>,
  base: string,
  pairs: ComparisonPair[],
  all: ComparisonPair[],
): void {
  ctx.dir.writeJson(path.join(base, 'comparison_pairs.json'), slimPairs(pairs));
  if (ctx.settings.epoch.pairPolicy !== 'mixed')
    ctx.dir.writeJson(path.join(base, 'comparison_pairs_all.json'), slimPairs(all));
}

/** The skill at the end of an epoch's boundary, as saved (the next epoch's starting skill). */
export function epochEndSkill(ctx: Pick<RunContext, 'dir' | 'plan' | 'skillInit'>, epoch: number): SkillPackage {
  return readSkillFile(ctx.dir, ctx.dir.skill(epoch * ctx.plan.stepsPerEpoch)) ?? ctx.skillInit;
}
