/**
 * The files of a run directory, as schemas: what the trainer writes and what the dashboard and
 * resume read. Field names follow the original SkillOpt so that its run directories read too;
 * fields it does not have are optional.
 */
import { z } from 'zod';
import { GainCostSchema, TaskCostSchema } from './cost-records.ts';

export { GainCostSchema, TaskCostSchema, type GainCost, type TaskCost } from './cost-records.ts';
export { TransferSchema, type Transfer } from './transfer-records.ts';
import { AuditRecordSchema, RunAuditSchema } from './audit-records.ts';
import { TransferSchema } from './transfer-records.ts';

export const StageUsageSchema = z
  .object({
    calls: z.number(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    cached_tokens: z.number().optional(),
    /** Input tokens written to the providers' prompt caches. */
    cache_write_tokens: z.number().optional(),
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
    /** Selection items that ended in infrastructure errors (left out of the score). */
    errors: z.number().optional(),
    /** The paired gate's test (`evaluation.gate: paired`). */
    test: z
      .object({
        kind: z.literal('paired'),
        method: z.enum(['mcnemar_exact', 'paired_t', 'none']),
        n: z.number(),
        effect: z.number(),
        p: z.number(),
        alpha: z.number(),
        min_delta: z.number(),
        repeats: z.number(),
        discordant: z.object({ current_only: z.number(), candidate_only: z.number() }).optional(),
        passed: z.boolean(),
        stopped_early: z.boolean(),
      })
      .optional(),
  })
  .loose();

/** What the gate did with a candidate. */
export const GATE_ACTIONS = ['accept_new_best', 'accept', 'reject', 'force_accept'] as const;
export type GateAction = (typeof GATE_ACTIONS)[number];
/**
 * What a step did: a gate action, or a skip when it had no patch, no usable candidate, a
 * candidate that is the skill it started from (every edit was skipped), a candidate package
 * that its edits broke (a script that no longer compiles, a link to nothing: never scored), or
 * a candidate the audit rejects (it carries items of the data: never scored), or an accept whose
 * gain the audit flagged, turned into a reject (`evaluation.audit.on_flag: reject`).
 */
export const STEP_ACTIONS = [
  ...GATE_ACTIONS,
  'skip_no_patches',
  'skip_no_rewrite',
  'skip_no_change',
  'skip_invalid_package',
  'skip_audit',
  'reject_audit',
] as const;
export type StepAction = (typeof STEP_ACTIONS)[number];

/** The candidate replaced the current skill (any spelling of the original's too). */
export function isAccepted(action: string): boolean {
  return action === 'accept' || action === 'accept_new_best' || action === 'force_accept';
}

/** The candidate was scored and not taken: by the gate, or by the audit of its gain. */
export function isRejected(action: string): boolean {
  return action === 'reject' || action === 'reject_audit';
}

/** The step left the skill as it was, before any evaluation. */
export function isSkipped(action: string): boolean {
  return (
    action === 'skip_no_patches' ||
    action === 'skip_no_rewrite' ||
    action === 'skip_no_change' ||
    action === 'skip_invalid_package' ||
    action === 'skip_audit'
  );
}

const BatchScoreSchema = z.object({
  batch_idx: z.number(),
  batch_seed: z.number(),
  n_envs: z.number(),
  hard: z.number(),
  soft: z.number(),
  n_failure_patches: z.number(),
  n_success_patches: z.number(),
});

/** The autonomous learning rate's decision (`lr_decision.json`, a line of `lr_history.jsonl`). */
export const LrDecisionSchema = z.object({
  learning_rate: z.number(),
  raw_learning_rate: z.number().nullable(),
  available_update_items: z.number(),
  clamped: z.boolean(),
  fallback: z.boolean(),
  reasoning: z.string(),
  confidence: z.string(),
  risk_notes: z.array(z.string()),
});
export type LrDecision = z.infer<typeof LrDecisionSchema>;

/** Precision, recall and F1 of a skill's loading over activation rollouts, and the queries that pass. */
export const ActivationScoreSchema = z.object({
  precision: z.number(),
  recall: z.number(),
  f1: z.number(),
  n: z.number(),
  passed: z.number(),
  queries: z.number(),
  /** Where the queries carry answers: the mean task score of those rollouts, and of loaded-as-it-should × task. */
  task: z.number().optional(),
  joint: z.number().optional(),
});
export type ActivationScore = z.infer<typeof ActivationScoreSchema>;

/**
 * One step of `history.json` as this trainer writes it, every field. The fields of the select,
 * update and evaluate stages are there only when the step reached them (a skip stops earlier).
 */
export const StepRecordSchema = z
  .object({
    step: z.number(),
    epoch: z.number(),
    step_in_epoch: z.number(),
    /** What the step paid, per purpose. */
    tokens: z.record(z.string(), StageUsageSchema),
    rollout_hard: z.number(),
    rollout_soft: z.number(),
    rollout_n: z.number(),
    rollout_errors: z.number(),
    accumulation_batches: z.array(BatchScoreSchema),
    n_patches: z.number(),
    n_failure_patches: z.number(),
    n_success_patches: z.number(),
    /** A package's files the step's rollouts used: per file, how many of `rollouts` read or ran it. */
    package_usage: z
      .object({
        rollouts: z.number(),
        files: z.record(z.string(), z.object({ read: z.number(), ran: z.number() })),
      })
      .optional(),
    /** Set on a step that trained the description (`train.targets`); absent on one that edited the body. */
    step_target: z.literal('description').optional(),
    /** Activation rollouts (the `triggers` env): how the step's training rollouts loaded the skill. */
    activation_train: ActivationScoreSchema.optional(),
    action: z.enum(STEP_ACTIONS),
    n_edits_merged: z.number().optional(),
    n_edits_ranked: z.number().optional(),
    /** Edits allowed this step; null in the full-rewrite mode, which has no learning rate. */
    edit_budget: z.number().nullable().optional(),
    lr_control_mode: z.enum(['fixed', 'autonomous', 'none']).optional(),
    lr_decision: LrDecisionSchema.optional(),
    /** The real minibatch size behind each selected item. */
    support_counts: z.array(z.number().nullable()).optional(),
    skip_reason: z.string().optional(),
    candidate_hash: z.string().optional(),
    candidate_skill_len: z.number().optional(),
    candidate_skill_tokens: z.number().optional(),
    rewrite_change_summary: z.array(z.string()).optional(),
    edit_apply_summary: z
      .object({ total: z.number(), applied: z.number(), skipped: z.number(), errors: z.number() })
      .optional(),
    /** A package's checks before the gate: how many ran, and those the candidate broke (`package_checks.json` has them all). */
    package_checks: z
      .object({
        checks: z.number(),
        broken: z.array(z.object({ check: z.string(), file: z.string().optional(), message: z.string() })),
      })
      .optional(),
    /** The audit of the candidate before the gate: its verdict and each check's (`audit.json` has the evidence). */
    audit: AuditRecordSchema.optional(),
    /** A description step's change: the description before and after its edit. */
    description_change: z.object({ before: z.string(), after: z.string() }).optional(),
    selection_hard: z.number().nullable().optional(),
    selection_soft: z.number().nullable().optional(),
    gate_metric: z.enum(['hard', 'soft', 'mixed']).optional(),
    /** Null when the gate stopped early: only `candidate_gate_upper_bound` is known then. */
    candidate_gate_score: z.number().nullable().optional(),
    /** After an early stop: the most the candidate could have scored. */
    candidate_gate_upper_bound: z.number().optional(),
    gate: GateStatsSchema.optional(),
    /** Activation rollouts: how the candidate loaded on the gate's queries, and the queries it gets wrong (load rate on the wrong side of one half). */
    activation_val: ActivationScoreSchema.extend({
      failing: z.array(z.string()),
      /** Gate queries the candidate passes and the skill it started from failed (`fixed`), and the other way (`broke`). */
      flipped: z.object({ fixed: z.array(z.string()), broke: z.array(z.string()) }).optional(),
    }).optional(),
    /** With a candidate pool: the step's parent, the members after it, those dropped, and the merge tried. */
    pool: z
      .object({
        parent: z.string(),
        members: z.array(z.string()),
        dropped: z.array(z.string()),
        merge: z
          .object({
            parents: z.array(z.string()),
            action: z.string(),
            score: z.number().nullable().optional(),
            rollouts_used: z.number().optional(),
          })
          .optional(),
      })
      .optional(),
    n_execution_lapse_notes: z.number().optional(),
    n_appendix_notes_added: z.number().optional(),
    n_appendix_notes_total: z.number().optional(),
    n_appendix_notes_consolidated: z.number().optional(),
    current_score: z.number(),
    best_score: z.number(),
    best_step: z.number(),
    current_origin: z.string(),
    best_origin: z.string(),
    skill_len: z.number(),
    skill_tokens: z.number(),
  })
  .strict();
export type StepRecord = z.infer<typeof StepRecordSchema>;

/**
 * A step record as the dashboard and a resume read it: this trainer's (`StepRecordSchema`), or
 * the original's, whose records may lack fields, spell actions its own way and carry timings.
 */
export const HistoryRecordSchema = StepRecordSchema.partial()
  .extend({
    step: z.number(),
    epoch: z.number(),
    action: z.string(),
    timing: z.record(z.string(), z.number()).optional(),
    wall_time_s: z.number().optional(),
    lr_control_mode: z.string().optional(),
    gate_metric: z.string().optional(),
    accumulation_batches: z.array(z.looseObject({})).optional(),
    lr_decision: z.looseObject({}).optional(),
    rewrite_change_summary: z.unknown().optional(),
    edit_apply_summary: z
      .object({ total: z.number(), applied: z.number(), skipped: z.number(), errors: z.number() })
      .loose()
      .optional(),
  })
  .loose();
export type HistoryRecord = z.infer<typeof HistoryRecordSchema>;
export const HistorySchema = z.array(HistoryRecordSchema);

/** A candidate of a pool run (`pool/lineage.json`): where it came from and what the gate did with it. */
export const LineageNodeSchema = z.object({
  /** The skill's origin: `initial_skill`, `step_0003`, `merge_0003`, `slow_update_epoch_02`, … */
  id: z.string(),
  /** One parent, two for a merge, none for the initial skill. */
  parents: z.array(z.string()),
  kind: z.enum(['initial', 'step', 'merge', 'slow_update']),
  /** The step it was made in (a boundary's skill: the epoch's last step). */
  step: z.number(),
  /** What the gate did with it (`initial` for the initial skill). */
  action: z.string(),
  /** Selection score on the gate metric; null when the gate stopped early. */
  score: z.number().nullable(),
  tokens: z.number(),
  skill_hash: z.string(),
  /** The file holding the skill, in the run directory. */
  skill_file: z.string(),
  /** Per selection item, its score (members only; null: not scored). */
  item_scores: z.array(z.number().nullable()).optional(),
  /** The edits that made it from its first parent (patch mode): what a merge can carry over. */
  edits: z.array(z.record(z.string(), z.unknown())).optional(),
  /** The paired gate's test: effect per item and one-sided p-value. */
  test: z.object({ effect: z.number(), p: z.number() }).optional(),
  /** A member of the pool as of the last commit. */
  in_pool: z.boolean(),
  /** The step whose record lists it as dropped (one dropped for a slow update's skill: the step after the boundary). */
  dropped_at: z.number().optional(),
});

export const LineageFileSchema = z.object({ members: z.array(z.string()), nodes: z.array(LineageNodeSchema) }).loose();
export type LineageFile = z.infer<typeof LineageFileSchema>;

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
    /** The candidate pool's members (`optimizer.pool_size`), by origin; their skills are in `pool/`. */
    pool: z.array(z.string()).optional(),
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
    transfer: TransferSchema.optional(),
    /** The cost of one test task with the initial and the best skill. */
    cost_per_task: z.object({ initial: TaskCostSchema.optional(), best: TaskCostSchema.optional() }).optional(),
    gain_cost: GainCostSchema.optional(),
    audit: RunAuditSchema.optional(),
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
    /** What an agent target did in each run: tools, files, errors (src/model/harness/trace.ts). */
    traces: z.array(z.unknown()).optional(),
  })
  .loose();
export type RolloutResult = z.infer<typeof RolloutResultSchema>;
