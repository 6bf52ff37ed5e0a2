/**
 * Training settings checked before any model call is paid for: settings that would make a run
 * spend its budget and learn nothing are refused with the reason; settings the original allows
 * but that users should know about are warned about. Pure: it reads the config and the split
 * sizes, throws a `UserError` for the first refusal and returns the warnings.
 */
import { UserError } from '../errors.ts';
import type { Config } from './schema.ts';

export interface SplitSizes {
  train: number;
  val: number;
  test: number;
}

const FULL_REWRITE = ['full_rewrite', 'full_rewrite_minibatch', 'minibatch_full_rewrite', 'skill_rewrite_minibatch'];

/** Checks of the config alone (no data needed). */
function checkTrainingSettings(config: Config): void {
  const o = config.optimizer;
  const fullRewrite = FULL_REWRITE.includes(o.skill_update_mode.trim().toLowerCase());
  if (o.learning_rate === 0 && !fullRewrite) {
    throw new UserError(
      `optimizer.learning_rate is 0: every analyst would be asked for 0 edits and no step could change the skill, so the run would pay for rollouts and reflection and learn nothing; set it to 1 or more (the original's default is 4)`,
    );
  }
  if (
    !fullRewrite &&
    (o.lr_scheduler === 'linear' || o.lr_scheduler === 'cosine') &&
    o.min_learning_rate > o.learning_rate
  ) {
    throw new UserError(
      `optimizer.min_learning_rate (${o.min_learning_rate}) is above optimizer.learning_rate (${o.learning_rate}): the ${o.lr_scheduler} schedule decays from learning_rate down to min_learning_rate, so it would never go below ${o.min_learning_rate} edits per step; set min_learning_rate to ${o.learning_rate} or less`,
    );
  }
  if (o.pool_size > 1 && o.use_skill_aware_reflection) {
    throw new UserError(
      "optimizer.pool_size and optimizer.use_skill_aware_reflection are both on: skill-aware reflection writes notes into the current skill outside the gate, so a pool member's per-item scores would no longer be its own; turn one of them off",
    );
  }
  if (o.pool_size > 1 && config.evaluation.gate_overlap === true) {
    throw new UserError(
      "optimizer.pool_size and evaluation.gate_overlap are both on: the overlap starts the next step under the current skill, but a pool's next step improves a member drawn from its front; turn one of them off",
    );
  }
  if (o.pool_merge && o.pool_size <= 1)
    throw new UserError(
      `optimizer.pool_merge merges two pool members' edits: it needs optimizer.pool_size of 2 or more (it is ${o.pool_size})`,
    );
  if (o.pool_merge && fullRewrite)
    throw new UserError(
      'optimizer.pool_merge carries edits over from one pool member to another: the full-rewrite mode makes no edits; turn it off',
    );
  if (o.pool_merge && !['patch', 'edits'].includes(o.skill_update_mode.trim().toLowerCase())) {
    throw new UserError(
      `optimizer.pool_merge carries edits over from one pool member to another: only the patch mode makes edits (optimizer.skill_update_mode is ${o.skill_update_mode})`,
    );
  }
  const e = config.evaluation;
  if (e.cost_weight > 0 && e.gate === 'paired')
    throw new UserError(
      'evaluation.cost_weight is set and evaluation.gate is paired: the paired gate tests per-item scores, and the cost is weighed against the mean score of the whole set; use the exact gate or set cost_weight: 0',
    );
  if (e.cost_weight > 0 && e.gate_early_accept)
    throw new UserError(
      "evaluation.cost_weight and evaluation.gate_early_accept are both on: an accept is certain only once the candidate's cost is known, which is when every item is scored; turn gate_early_accept off",
    );
  if (e.gate === 'paired' && e.use_semantic_density) {
    throw new UserError(
      'evaluation.gate is paired and evaluation.use_semantic_density is on: the paired gate tests per-item scores, and the density bonus is a score of the whole skill that no item has; turn one of them off',
    );
  }
}

/**
 * Everything `train` checks before its first call: the settings above, then the splits. Returns
 * the warnings to show.
 */
export function preflight(config: Config, splits: SplitSizes, envName = config.env.name): string[] {
  checkTrainingSettings(config);
  const warnings: string[] = [];
  if (splits.train === 0) throw new UserError(`env '${envName}': the train split is empty`);
  if (splits.val === 0) throw new UserError(`env '${envName}': the val (selection) split is empty`);
  if (config.evaluation.eval_test && splits.test === 0)
    throw new UserError(`env '${envName}': the test split is empty (or set evaluation.eval_test: false)`);
  const trainSize = config.train.train_size;
  if (trainSize > 0 && trainSize !== splits.train) {
    // A benchmark config pins its size; `env.limit` shrinking the splits is not a mismatch.
    if (config.env.limit > 0)
      warnings.push(
        `train.train_size is ${trainSize} but env.limit leaves ${splits.train} training items; using ${splits.train}`,
      );
    else
      throw new UserError(
        `train.train_size is ${trainSize} but the train split has ${splits.train} items; set train.train_size: 0 to use the split's size`,
      );
  }
  const { batch_size: batch, accumulation } = config.train;
  if (splits.train < batch) {
    warnings.push(
      `the train split has ${splits.train} items, fewer than train.batch_size=${batch}: each epoch is a single step on all ${splits.train} of them`,
    );
  }
  // Batches per epoch, and how many of them the items fill; the rest repeat items (as the original refills them).
  const batchesPerEpoch = Math.ceil(splits.train / (batch * accumulation)) * accumulation;
  const filled = Math.ceil(splits.train / batch);
  if (filled < batchesPerEpoch) {
    warnings.push(
      `train.accumulation=${accumulation} with train.batch_size=${batch} asks for ${batchesPerEpoch} batches per epoch, but the ${splits.train} training items fill only ${filled}: the other ${batchesPerEpoch - filled} repeat items already seen in the step`,
    );
  }
  return warnings;
}
