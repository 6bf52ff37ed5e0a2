/**
 * The flat command-line flags of the original's `train.py` and `eval_only.py` (`--batch_size 8`,
 * `--target_model gpt-5.5`, `--out_root runs/x`, …). Each sets the config key of the same flat
 * name (`--edit_budget` is `optimizer.learning_rate`, `--backend` is `model.backend`, an env
 * option such as `--max_turns` is `env.max_turns`), after `--cfg-options`, as the original does.
 */
import { ORIGINAL_MODEL_KEYS } from './original-keys.ts';

/** The flags that are not backend settings, in the order of the original's `--help`. */
const CORE = [
  'env',
  'backend',
  'optimizer_model',
  'target_model',
  'optimizer_backend',
  'target_backend',
  'reasoning_effort',
  'rewrite_reasoning_effort',
  'rewrite_max_completion_tokens',
  'skill_init',
  'num_epochs',
  'train_size',
  'steps_per_epoch',
  'batch_size',
  'accumulation',
  'seed',
  'edit_budget',
  'min_edit_budget',
  'lr_scheduler',
  'lr_control_mode',
  'merge_batch_size',
  'max_analyst_rounds',
  'sel_env_num',
  'test_env_num',
  'eval_test',
  'use_gate',
  'max_steps',
  'max_api_workers',
  'analyst_workers',
  'failure_only',
  'minibatch_size',
  'skill_update_mode',
  'use_slow_update',
  'slow_update_samples',
  'longitudinal_pair_policy',
  'use_meta_skill',
  'use_skill_aware_reflection',
  'skill_aware_appendix_source',
  'skill_aware_consolidate_threshold',
  'data_path',
  'split_mode',
  'split_ratio',
  'split_seed',
  'split_dir',
  'split_output_dir',
  'data_root',
  'max_turns',
  'workers',
  'limit',
  'shuffle_choices',
  'use_theorem',
  'use_sketch',
  'image_detail',
  'judge_model',
  'judge_max_completion_tokens',
  'judge_retries',
  'out_root',
  'mode',
];

export const ORIGINAL_FLAGS: string[] = [...CORE, ...Object.keys(ORIGINAL_MODEL_KEYS).filter((k) => !CORE.includes(k))];

/** Flags the original reads as booleans: true, 1 and yes (any case) are true, anything else false. */
const BOOLEAN_FLAGS = new Set([
  'eval_test',
  'use_gate',
  'failure_only',
  'use_slow_update',
  'use_meta_skill',
  'use_skill_aware_reflection',
  'shuffle_choices',
  'use_theorem',
  'use_sketch',
  'qwen_chat_enable_thinking',
  'optimizer_qwen_chat_enable_thinking',
  'target_qwen_chat_enable_thinking',
  'minimax_enable_thinking',
  'codex_exec_full_auto',
  'codex_exec_network_access',
  'codex_exec_web_search',
  'copilot_exec_allow_all_tools',
  'codex_trace_to_optimizer',
]);

/** A flag's value as the original reads it, ready for the config loader's casting. */
export function flagValue(flag: string, value: string): string {
  if (!BOOLEAN_FLAGS.has(flag)) return value;
  return ['true', '1', 'yes'].includes(value.trim().toLowerCase()) ? 'true' : 'false';
}

/** The flags most used, shown by name in `--help`; the rest are named by family. */
export const COMMON_FLAGS = [
  'env',
  'backend',
  'target_model',
  'optimizer_model',
  'target_backend',
  'optimizer_backend',
  'num_epochs',
  'batch_size',
  'edit_budget',
  'min_edit_budget',
  'lr_scheduler',
  'seed',
  'use_gate',
  'skill_init',
  'data_path',
  'split_dir',
  'workers',
  'limit',
  'out_root',
];
