/**
 * Optimizer state at the epoch boundary: notes for the optimizer (not the target) on which
 * changes help this skill, used in analyst, merge, ranking and learning-rate prompts from the
 * next epoch on. The skill itself never contains them.
 */
import { readJson } from '../../run/atomic.ts';
import { comparePairs, epochEndSkill, savePairs } from './comparison-rollouts.ts';
import type { RunContext } from '../context.ts';
import { round } from '../../util/round.ts';
import type { MetaSkillAction } from '../../run/events.ts';
import { writeEpochNote } from './note-writer.ts';
import type { ComparisonPair } from '../../protocol/optimizer.ts';
import type { SkillPackage } from '../../skill/package/package.ts';

/** The optimizer notes in force for `epoch`: the latest ones written at an earlier boundary. */
export function activeMetaSkill(ctx: Pick<RunContext, 'dir' | 'settings'>, epoch: number): string {
  if (!ctx.settings.epoch.metaSkill) return '';
  for (let e = epoch - 1; e >= 1; e--) {
    const r = readJson<{ meta_skill_content?: string }>(ctx.dir.metaSkill(e, 'meta_skill_result.json'));
    if (r?.meta_skill_content?.trim()) return r.meta_skill_content.trim();
  }
  return '';
}

export async function metaSkill(
  ctx: Pick<RunContext, 'dir' | 'events' | 'settings' | 'rollouts' | 'train' | 'plan' | 'skillInit' | 'opt'>,
  epoch: number,
  epochSkill: SkillPackage,
  slowPairs: ComparisonPair[] | undefined,
): Promise<void> {
  const file = ctx.dir.metaSkill(epoch, 'meta_skill_result.json');
  if (readJson(file)) return;
  const started = performance.now();
  const write = (result: { action: MetaSkillAction; [k: string]: unknown }) => {
    ctx.dir.writeJson(file, { ...result, time_s: round((performance.now() - started) / 1000, 1) });
    ctx.events.emit({ type: 'epoch_boundary', epoch, kind: 'meta_skill', action: result.action });
  };
  if (epoch === 1) {
    write({ action: 'skip_first_epoch', epoch });
    return;
  }
  const prevSkill = epochEndSkill(ctx, epoch - 1);
  // The slow update's comparison when it made one; else the same comparison (on a resume, from
  // the score cache, so at no cost).
  let pairs = slowPairs;
  if (!pairs) {
    const cmp = await comparePairs(ctx, prevSkill, epochSkill, epoch, ctx.dir.metaSkill(epoch));
    if (!ctx.settings.epoch.slowUpdate) savePairs(ctx, ctx.dir.metaSkill(epoch), cmp.pairs, cmp.all);
    pairs = cmp.pairs;
  }
  const res = await writeEpochNote(ctx.opt, 'meta_skill', {
    prevSkill: prevSkill.skill,
    currSkill: epochSkill.skill,
    previous: activeMetaSkill(ctx, epoch),
    pairs,
  });
  write(
    res
      ? { action: 'write_meta_skill', reasoning: res.reasoning, meta_skill_content: res.content }
      : { action: 'no_content' },
  );
}
