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

/**
 * The skill the boundary after `epoch` leaves, from the one it finds, when that is known without
 * a model call: unchanged with no slow update, the empty slow-update field after the first epoch
 * (nothing to compare yet); unknown after a slow update that compares two epochs.
 */
export function skillAfterBoundary(
  settings: Pick<TrainSettings, 'epoch'>,
  epoch: number,
): ((skill: string) => string) | undefined {
  if (!settings.epoch.slowUpdate) return (skill) => skill;
  return epoch === 1 ? injectEmptySlowUpdateField : undefined;
}

export async function epochBoundary(ctx: RunContext, state: TrainState, epoch: number): Promise<void> {
  if (state.boundariesDone >= epoch) return;
  const { slowUpdate: withSlowUpdate, metaSkill: withMetaSkill } = ctx.settings.epoch;
  // The epoch's last-step skill, before this boundary changes it.
  const epochFile = ctx.dir.path('skills', `epoch_${pad2(epoch)}_last_step.md`);
  const saved = ctx.dir.readText(epochFile);
  const epochSkill = saved ?? state.current.skill;
  if (saved === undefined) ctx.dir.writeText(epochFile, epochSkill);
  const pairs = withSlowUpdate ? await slowUpdate(ctx, state, epoch, epochSkill) : undefined;
  if (withMetaSkill) await metaSkill(ctx, epoch, epochSkill, pairs);
  state.boundariesDone = epoch;
  persistState(ctx, state);
}
