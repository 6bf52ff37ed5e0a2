/**
 * The original's flat spelling of config keys (`batch_size`, `edit_budget`, …) and where each
 * lives in the structured form, and the original's keys that are accepted and ignored.
 */
import { ENV_CORE_KEYS } from './schema.ts';

/** The original's flat key names, and where each lives in the structured form (reference §4.4). */
export const FLAT_KEYS: Record<string, string> = {
  model_backend: 'model.backend',
  backend: 'model.backend',
  optimizer_model: 'model.optimizer.model',
  target_model: 'model.target.model',
  optimizer_backend: 'model.optimizer.backend',
  target_backend: 'model.target.backend',
  reasoning_effort: 'model.reasoning_effort',
  rewrite_reasoning_effort: 'model.rewrite_reasoning_effort',
  rewrite_max_completion_tokens: 'model.rewrite_max_completion_tokens',
  num_epochs: 'train.num_epochs',
  train_size: 'train.train_size',
  steps_per_epoch: 'train.steps_per_epoch',
  batch_size: 'train.batch_size',
  accumulation: 'train.accumulation',
  seed: 'train.seed',
  minibatch_size: 'gradient.minibatch_size',
  merge_batch_size: 'gradient.merge_batch_size',
  analyst_workers: 'gradient.analyst_workers',
  failure_only: 'gradient.failure_only',
  edit_budget: 'optimizer.learning_rate',
  min_edit_budget: 'optimizer.min_learning_rate',
  meta_edit_budget: 'optimizer.meta_learning_rate',
  lr_scheduler: 'optimizer.lr_scheduler',
  lr_control_mode: 'optimizer.lr_control_mode',
  skill_update_mode: 'optimizer.skill_update_mode',
  use_slow_update: 'optimizer.use_slow_update',
  slow_update_samples: 'optimizer.slow_update_samples',
  slow_update_gate_with_selection: 'optimizer.slow_update_gate_with_selection',
  longitudinal_pair_policy: 'optimizer.longitudinal_pair_policy',
  use_meta_skill: 'optimizer.use_meta_skill',
  use_skill_aware_reflection: 'optimizer.use_skill_aware_reflection',
  skill_aware_appendix_source: 'optimizer.skill_aware_appendix_source',
  skill_aware_consolidate_threshold: 'optimizer.skill_aware_consolidate_threshold',
  max_skill_tokens: 'optimizer.max_skill_tokens',
  use_gate: 'evaluation.use_gate',
  gate_metric: 'evaluation.gate_metric',
  gate_mixed_weight: 'evaluation.gate_mixed_weight',
  use_semantic_density: 'evaluation.use_semantic_density',
  semantic_density_weight: 'evaluation.semantic_density_weight',
  leading_words: 'evaluation.leading_words',
  sel_env_num: 'evaluation.sel_env_num',
  test_env_num: 'evaluation.test_env_num',
  eval_test: 'evaluation.eval_test',
  env: 'env.name',
  ...Object.fromEntries(ENV_CORE_KEYS.filter((k) => k !== 'name').map((k) => [k, `env.${k}`])),
};

/** Keys of the original that are accepted and ignored, with the reason shown to the user. */
export const RETIRED_KEYS: Record<string, string> = {
  'gradient.max_analyst_rounds': 'it never had an effect and is ignored',
  'optimizer.meta_learning_rate': 'it never had an effect and is ignored',
};
