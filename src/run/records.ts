/**
 * The files of a run directory, as schemas: what the trainer writes and what the dashboard and
 * resume read. Field names follow the original SkillOpt so that its run directories read too;
 * fields it does not have are optional.
 */
import { z } from 'zod';

export const StageUsageSchema = z
  .object({
    calls: z.number(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    cached_tokens: z.number().optional(),
    reasoning_tokens: z.number().optional(),
    total_tokens: z.number().optional(),
    /** USD; null when a price is unknown. */
    cost_usd: z.number().nullable().optional(),
  })
  .loose();
export type StageUsage = z.infer<typeof StageUsageSchema>;

export const GateStatsSchema = z
  .object({
    /** Selection rollouts the decision needed. */
    rollouts_used: z.number(),
    /** Selection rollouts avoided by the score cache and by stopping early. */
    rollouts_saved: z.number(),
    cache_hits: z.number().optional(),
    early_stopped: z.boolean().optional(),
  })
  .loose();

export const HistoryRecordSchema = z
  .object({
    step: z.number(),
    epoch: z.number(),
    step_in_epoch: z.number().optional(),
    timing: z.record(z.string(), z.number()).optional(),
    tokens: z.record(z.string(), StageUsageSchema).optional(),
    rollout_hard: z.number().optional(),
    rollout_soft: z.number().optional(),
    rollout_n: z.number().optional(),
    rollout_errors: z.number().optional(),
    n_patches: z.number().optional(),
    n_failure_patches: z.number().optional(),
    n_success_patches: z.number().optional(),
    n_edits_merged: z.number().optional(),
    n_edits_ranked: z.number().optional(),
    edit_budget: z.number().nullable().optional(),
    lr_control_mode: z.string().optional(),
    candidate_hash: z.string().optional(),
    candidate_skill_len: z.number().optional(),
    edit_apply_summary: z.object({ total: z.number(), applied: z.number(), skipped: z.number(), errors: z.number() }).loose().optional(),
    selection_hard: z.number().nullable().optional(),
    selection_soft: z.number().nullable().optional(),
    gate_metric: z.string().optional(),
    candidate_gate_score: z.number().nullable().optional(),
    gate: GateStatsSchema.optional(),
    action: z.string(),
    current_score: z.number().optional(),
    best_score: z.number().optional(),
    best_step: z.number().optional(),
    current_origin: z.string().optional(),
    best_origin: z.string().optional(),
    skill_len: z.number().optional(),
    wall_time_s: z.number().optional(),
  })
  .loose();
export type HistoryRecord = z.infer<typeof HistoryRecordSchema>;
export const HistorySchema = z.array(HistoryRecordSchema);

export const RuntimeStateSchema = z
  .object({
    last_completed_step: z.number().int().nonnegative(),
    /** The initial skill's selection score (gate metric). */
    baseline_score: z.number().optional(),
    current_skill_path: z.string().optional(),
    current_score: z.number().nullable().optional(),
    current_origin: z.string().optional(),
    best_skill_path: z.string().optional(),
    /** Identifies the committed best skill when `best_skill.md` was rewritten after the commit. */
    best_skill_hash: z.string().optional(),
    best_score: z.number().nullable().optional(),
    best_step: z.number().optional(),
    best_origin: z.string().optional(),
    /** Scheduler position, restored on resume (not recomputed from the step number). */
    scheduler: z.object({ current_step: z.number() }).optional(),
    /** The last epoch whose boundary (slow update, meta skill) is complete. */
    epoch_boundaries_done: z.number().int().nonnegative().optional(),
    /** Wall time of the run in earlier processes, seconds. */
    elapsed_s: z.number().optional(),
    status: z.enum(['running', 'finished', 'failed', 'stopped']).optional(),
  })
  .loose();
export type RuntimeState = z.infer<typeof RuntimeStateSchema>;

export const SummarySchema = z
  .object({
    version: z.string().optional(),
    baseline_selection_hard: z.number().nullable().optional(),
    best_selection_hard: z.number().nullable().optional(),
    final_selection_hard: z.number().nullable().optional(),
    best_step: z.number().optional(),
    total_steps: z.number().optional(),
    total_accepts: z.number().optional(),
    total_rejects: z.number().optional(),
    total_skips: z.number().optional(),
    baseline_test_hard: z.number().nullable().optional(),
    test_hard: z.number().nullable().optional(),
    final_test_hard: z.number().nullable().optional(),
    total_wall_time_s: z.number().optional(),
    token_summary: z.record(z.string(), StageUsageSchema).optional(),
  })
  .loose();
export type Summary = z.infer<typeof SummarySchema>;

/**
 * One line of a rollout directory's `results.jsonl`, with the item's conversation (runs of the
 * original keep it in `predictions/<id>/conversation.json` instead). Rollout directories: `steps/step_NNNN/rollout`,
 * `steps/step_NNNN/selection_eval`, `selection_eval_baseline`, `test_eval_baseline`,
 * `test_eval`, `test_eval_final`, `final_selection_eval`, `slow_update/epoch_NN/rollout_prev|rollout_curr`.
 */
export const RolloutResultSchema = z
  .object({
    id: z.union([z.string(), z.number()]).transform(String),
    hard: z.number(),
    soft: z.number(),
    task_type: z.string().optional(),
    task: z.string().optional(),
    predicted_answer: z.unknown().optional(),
    expected: z.unknown().optional(),
    fail_reason: z.string().optional(),
    feedback: z.string().optional(),
    /** An infrastructure failure: the item is not scored. */
    error: z.object({ kind: z.string(), message: z.string() }).optional(),
    skill_hash: z.string().optional(),
    target: z.string().optional(),
    sample: z.number().optional(),
    conversation: z.array(z.unknown()).optional(),
  })
  .loose();
export type RolloutResult = z.infer<typeof RolloutResultSchema>;
