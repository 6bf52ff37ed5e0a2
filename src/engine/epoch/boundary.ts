/**
 * The epoch boundary: the slow update (momentum), then the meta skill (optimizer state), both
 * from the same comparison of this epoch's skill with the previous epoch's.
 */
import { pad2 } from '../../run/layout.ts';
import type { RunContext, TrainState } from '../context.ts';
import { metaSkill } from './meta-skill.ts';
import { slowUpdate } from './slow-update.ts';
import { persistState } from '../checkpoint.ts';
import { injectEmptySlowUpdateField } from '../../skill/regions.ts';
import type { TrainSettings } from '../settings.ts';
import { withSkill, type SkillPackage } from '../../skill/package/package.ts';
import { readSkillFile, writeSkillFile } from '../../run/skill-files.ts';

/**
 * The skill the boundary after `epoch` leaves, from the one it finds, when that is known without
 * a model call: unchanged with no slow update, the empty slow-update field after the first epoch
 * (nothing to compare yet); unknown after a slow update that compares two epochs.
 */
export function skillAfterBoundary(
  settings: Pick<TrainSettings, 'epoch'>,
  epoch: number,
): ((skill: SkillPackage) => SkillPackage) | undefined {
  if (!settings.epoch.slowUpdate) return (skill) => skill;
  return epoch === 1 ? (kept) => withSkill(kept, injectEmptySlowUpdateField(kept.skill)) : undefined;
}

export async function epochBoundary(ctx: RunContext, state: TrainState, epoch: number): Promise<void> {
  if (state.boundariesDone >= epoch) return;
  const { slowUpdate: withSlowUpdate, metaSkill: withMetaSkill } = ctx.settings.epoch;
  // The epoch's last-step skill, before this boundary changes it.
  const epochFile = ctx.dir.path('skills', `epoch_${pad2(epoch)}_last_step.md`);
  const saved = readSkillFile(ctx.dir, epochFile);
  const epochSkill = saved ?? state.current;
  if (saved === undefined) writeSkillFile(ctx.dir, epochFile, epochSkill);
  const pairs = withSlowUpdate ? await slowUpdate(ctx, state, epoch, epochSkill) : undefined;
  if (withMetaSkill) await metaSkill(ctx, epoch, epochSkill, pairs);
  state.boundariesDone = epoch;
  persistState(ctx, state);
}
