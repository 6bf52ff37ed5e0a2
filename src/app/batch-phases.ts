/**
 * The phases of a training run whose answers can wait, sent as batches (`model.<role>.batch`):
 * the final evaluation's rollouts on test, and with `batch_baseline` the baseline's selection
 * evaluation. Every rollout of such a phase is started at once, so that one batch holds them all.
 */
import pLimit from 'p-limit';
import type { RunContext } from '../engine/context.ts';
import { Rollouts } from '../engine/stages/rollout.ts';
import type { SelectionEvaluator } from '../engine/stages/selection-eval.ts';
import { BATCH_IN_FLIGHT } from '../model/batch/batched-model.ts';
import type { RoleModels } from '../model/stack.ts';

export function batchPhases(
  models: Pick<RoleModels, 'batched'>,
  rollouts: Rollouts,
  o: { baseline: boolean; selectionOf: (rollouts: Rollouts) => SelectionEvaluator },
): Pick<RunContext, 'batchRollouts' | 'baselineSelection'> {
  if (!models.batched.on) return {};
  const { target, judge } = models.batched;
  const batchRollouts = new Rollouts(
    { ...rollouts.services, target, judge, limit: pLimit(BATCH_IN_FLIGHT) },
    rollouts.seed,
  );
  return { batchRollouts, ...(o.baseline ? { baselineSelection: o.selectionOf(batchRollouts) } : {}) };
}
