/**
 * The one schema of a skillopt configuration: every key, its type and its default.
 *
 * The structure follows the original SkillOpt's sections (`model`, `train`, `gradient`,
 * `optimizer`, `evaluation`, `env`) and key names, plus `budget`, `cache` and `run`. Per-role
 * model settings are objects (`model.target`, `model.optimizer`, `model.judge`; their schema is
 * `role-schema.ts`); the original's spelling (`model.target: gpt-5.5` with
 * `model.target_backend: …`) is accepted and normalised by the loader before validation.
 */
import { z } from 'zod';
import { AuditSchema } from './audit-schema.ts';
import { atMost, HUNDRED_MILLION, MILLION, THOUSAND, TEN_THOUSAND } from './bounds.ts';
import { EffortSchema, RoleSchema, TransferTargetSchema } from './role-schema.ts';

export {
  CapabilitiesSchema,
  PriceSchema,
  RoleSchema,
  TransferTargetSchema,
  type Capabilities,
  type Price,
  type RoleConfig,
  type TransferTarget,
} from './role-schema.ts';

/** The models: one role each for the target, the optimizer and the judge, and settings shared by their calls. */
export const ModelSchema = z
  .object({
    /** Backend label for the roles that leave `backend` unset (empty or `openai_chat`), as the original: `qwen_chat` and `minimax_chat` set the target only. */
    backend: z.string().default(''),
    /** The model that runs the tasks under the skill. */
    target: RoleSchema.default(RoleSchema.parse({})),
    /** The model that reflects on trajectories and proposes, merges and ranks edits. */
    optimizer: RoleSchema.default(RoleSchema.parse({})),
    /** LLM judge of the `tasks` env; unset fields fall back to the optimizer's. */
    judge: RoleSchema.partial().default({}),
    /** Reasoning effort of every call that does not set its own ('' = off). */
    reasoning_effort: EffortSchema.default('medium'),
    /** Reasoning effort of the whole-skill rewrite calls ('' = `model.reasoning_effort`). */
    rewrite_reasoning_effort: EffortSchema.default(''),
    /** Optimizer output cap for the whole-skill rewrite calls. */
    rewrite_max_completion_tokens: z
      .number()
      .int()
      .positive()
      .max(HUNDRED_MILLION, atMost(HUNDRED_MILLION))
      .default(64000),
    /** Optimizer output cap for analyst, merge, ranking, slow-update and meta-skill calls. */
    optimizer_max_completion_tokens: z
      .number()
      .int()
      .positive()
      .max(HUNDRED_MILLION, atMost(HUNDRED_MILLION))
      .default(16384),
    /** An agent target's trace (tools, files, errors) goes to the optimizer's analysts (the original's `codex_trace_to_optimizer`). */
    trace_to_optimizer: z.boolean().default(true),
  })
  .strict();

/** The training loop: epochs, batches and the seed. */
export const TrainSchema = z
  .object({
    /** Passes over the train split. */
    num_epochs: z.number().int().positive().max(TEN_THOUSAND, atMost(TEN_THOUSAND)).default(4),
    /** 0 = the size of the train split. */
    train_size: z.number().int().nonnegative().max(HUNDRED_MILLION, atMost(HUNDRED_MILLION)).default(0),
    /** Derived from the data; accepted for compatibility and ignored. */
    steps_per_epoch: z.number().int().nonnegative().optional(),
    /** Training items rolled out per step. */
    batch_size: z.number().int().positive().max(MILLION, atMost(MILLION)).default(40),
    /** Batches of `batch_size` items per step, whose patches go into one update (gradient accumulation). */
    accumulation: z.number().int().positive().max(TEN_THOUSAND, atMost(TEN_THOUSAND)).default(1),
    /** Seed of the batch order, the minibatches and every other random choice of the run. */
    seed: z.number().int().default(42),
    /**
     * What the steps edit: `body` (the skill's text and its package files) or `description` (the
     * front matter's description, which an agent chooses the skill by); several take turns, step
     * by step (`[body, description]`). Empty: `description` with the `triggers` env, else `body`.
     */
    targets: z
      .array(z.enum(['body', 'description']))
      .max(16)
      .default([]),
  })
  .strict();

/** Reflection (the backward pass): minibatches of trajectories for the analysts, and how their patches merge. */
export const GradientSchema = z
  .object({
    /** Trajectories per analyst call (one patch each). */
    minibatch_size: z.number().int().positive().max(MILLION, atMost(MILLION)).default(8),
    /** Patches merged by one merge call. */
    merge_batch_size: z.number().int().min(2).max(TEN_THOUSAND, atMost(TEN_THOUSAND)).default(8),
    /** Analyst (reflection) calls in flight at once. */
    analyst_workers: z.number().int().positive().max(TEN_THOUSAND, atMost(TEN_THOUSAND)).default(16),
    /** Reflect on failed trajectories only (no success-driven patches). */
    failure_only: z.boolean().default(false),
    /**
     * `combined`: failure and success patches meet in one top merge that also ranks them within
     * the step's budget; `staged`: the original's separate merges, final merge, then ranking.
     */
    merge_strategy: z.enum(['combined', 'staged']).default('combined'),
  })
  .strict();

/** How the skill is updated: the learning rate (edits per step) and its schedule, the update mode, the epoch boundary's slow update and meta skill, the candidate pool. */
export const OptimizerSchema = z
  .object({
    /** Description edits (`set_description`) a description step may apply, apart from the learning rate's budget. */
    description_edits: z.number().int().positive().max(16).default(1),
    /** Maximum edits applied per step (the scheduler's peak). */
    learning_rate: z.number().int().nonnegative().max(TEN_THOUSAND, atMost(TEN_THOUSAND)).default(4),
    /** The scheduler's floor: the fewest edits a `linear` or `cosine` schedule allows per step. */
    min_learning_rate: z.number().int().nonnegative().max(TEN_THOUSAND, atMost(TEN_THOUSAND)).default(2),
    /** How the edit budget changes over the steps; `autonomous`: the optimizer decides it. */
    lr_scheduler: z.enum(['constant', 'linear', 'cosine', 'autonomous']).default('cosine'),
    /** Who sets the edit budget: `fixed` (and its spellings) the scheduler, `autonomous` / `auto` / `optimizer` the optimizer, `none` / `off` / `no_lr` no budget (the original's values). */
    lr_control_mode: z
      .enum(['fixed', 'manual', 'scheduler', 'scheduled', 'autonomous', 'auto', 'optimizer', 'none', 'off', 'no_lr'])
      .default('fixed'),
    /** How an update changes the skill: `patch` applies the selected edits; `rewrite_from_suggestions` and `full_rewrite_minibatch` (and their spellings) rewrite the whole skill. */
    skill_update_mode: z
      .enum([
        'patch',
        'edits',
        'rewrite',
        'rewrite_from_suggestions',
        'suggestions',
        'rewrite_suggestions',
        'full_rewrite',
        'full_rewrite_minibatch',
        'minibatch_full_rewrite',
        'skill_rewrite_minibatch',
      ])
      .default('patch'),
    /** At each epoch boundary, compare the previous and current epoch's skill and write guidance into its protected slow-update field (momentum). */
    use_slow_update: z.boolean().default(true),
    /** Training items the slow update compares the two skills on. */
    slow_update_samples: z.number().int().positive().max(MILLION, atMost(MILLION)).default(20),
    /** Keep the slow update's skill only if it beats the current one on the selection split (even with the step gate off); false = keep it and measure its score. */
    slow_update_gate_with_selection: z.boolean().default(false),
    /** Which of the slow update's items are shown to the optimizer: `mixed`, those whose result `changed` between the two skills, or those `unchanged` (the original's spellings accepted). */
    longitudinal_pair_policy: z
      .enum([
        'mixed',
        'default',
        'random',
        'all',
        'changed',
        'change',
        'delta',
        '10_01',
        '01_10',
        'unchanged',
        'stable',
        'same',
        '00_11',
      ])
      .default('mixed'),
    /** At each epoch boundary, write notes for the optimizer (its memory), used in its prompts from the next epoch on. */
    use_meta_skill: z.boolean().default(true),
    /** Analysts also note execution lapses (rules the skill has but the target did not follow), kept in an appendix of the skill. */
    use_skill_aware_reflection: z.boolean().default(false),
    /** Which analysts write skill-aware notes: `both` failure and success analysts, or `failure_only`. */
    skill_aware_appendix_source: z.enum(['both', 'failure_only']).default('both'),
    /** Appendix notes above which an optimizer call compacts the appendix (0 = never). */
    skill_aware_consolidate_threshold: z.number().int().nonnegative().default(0),
    /** Largest skill, in tokens, that an update may produce (0 = no limit); in a package, its `SKILL.md`: what an agent loads whenever the skill fires. */
    max_skill_tokens: z.number().int().nonnegative().default(0),
    /** Largest text of a whole skill package (`SKILL.md` and every other text file), in tokens, that an update may produce (0 = no limit). */
    max_package_tokens: z.number().int().nonnegative().default(0),
    /**
     * Candidates kept in a pool (the Pareto front over selection items), each step's parent
     * picked from its front; 0 or 1 = one current skill, as the original.
     */
    pool_size: z.number().int().nonnegative().max(THOUSAND, atMost(THOUSAND)).default(0),
    /** With a pool: after an accepted step, also try the new candidate with another member's edits merged in. */
    pool_merge: z.boolean().default(false),
  })
  .strict();

/** The validation gate on the selection split, and the final evaluation on the test split. */
export const EvaluationSchema = z
  .object({
    /** Keep a candidate only if it beats the current skill on the selection split; false = accept every candidate. */
    use_gate: z.boolean().default(true),
    /** The score the gate compares: `hard` (pass share), `soft` (partial credit) or `mixed`. */
    gate_metric: z.enum(['hard', 'soft', 'mixed']).default('hard'),
    /** Weight of the hard score in `mixed` (the soft score gets the rest). */
    gate_mixed_weight: z.number().min(0).max(1).default(0.5),
    /** Stop a gate evaluation as soon as its decision is certain (the decision is identical). */
    gate_early_stop: z.boolean().default(true),
    /**
     * With the exact gate: hand the decision on once an accept is certain, and score the rest of
     * the selection items while the next step runs (its record waits for them; the same
     * decisions, but a step's token counts then include calls made while it ran).
     */
    gate_early_accept: z.boolean().default(false),
    /**
     * `exact`: the candidate's selection score must beat the current one's (the original's rule).
     * `paired`: a one-sided paired test on the same items must find the candidate better.
     */
    gate: z.enum(['exact', 'paired']).default('exact'),
    /** Samples of each selection item per skill; their mean is the item's score (for a stochastic target). */
    gate_repeats: z.number().int().positive().max(THOUSAND, atMost(THOUSAND)).default(1),
    /** The paired gate's significance level. */
    gate_alpha: z.number().gt(0).max(0.5).default(0.05),
    /** The paired gate's smallest mean improvement per item that is accepted. */
    gate_min_delta: z.number().min(0).max(1).default(0),
    /** When two skills' selection scores are within this much, the shorter (in tokens) is preferred; unset = off. */
    prefer_shorter_within: z.number().min(0).max(1).optional(),
    /**
     * Other targets (`BACKEND:MODEL`, as `skillopt eval --target`, or that role as an object with
     * some fields set) on which the final evaluation also scores the initial and best skills, into
     * `summary.json`'s `transfer`.
     */
    transfer_targets: z.array(TransferTargetSchema).default([]),
    /**
     * While the gate scores a candidate, run the next step ahead (its training rollouts, and in
     * the same epoch its analysts and merge) under the skill the gate is guessed to keep; a right
     * guess shortens the step and changes no decision, a wrong one wastes those calls. Unset: on,
     * except with a candidate pool (`optimizer.pool_size` over 1), whose next parent is not known
     * until the gate has decided.
     */
    gate_overlap: z.boolean().optional(),
    /**
     * Weigh what a task costs against the score: the gate compares score − cost_weight × cost,
     * the cost being the mean of the selection rollouts in `cost_unit`. 0.01 with `ktokens` trades
     * a point of score (0.01) for a thousand tokens a task; 0 = the score alone.
     */
    cost_weight: z.number().nonnegative().max(THOUSAND, atMost(THOUSAND)).default(0),
    /** What `cost_weight` is per: `ktokens` (thousands of input and output tokens a task) or `usd` (dollars a task at the target's price). */
    cost_unit: z.enum(['ktokens', 'usd']).default('ktokens'),
    /** The audit of accepted candidates, the best skill and the test figures (`docs/audit.md`). */
    audit: AuditSchema.prefault({}),
    /** Add a bonus for the skill's semantic density (directive words per length) to its gate score. */
    use_semantic_density: z.boolean().default(false),
    /** Weight of the semantic-density bonus. */
    semantic_density_weight: z.number().default(0.05),
    /** The directive words the semantic density counts (a list, or comma-separated); unset = the built-in list. */
    leading_words: z.union([z.array(z.string()), z.string()]).optional(),
    /** Selection-set size; 0 = the whole val split. */
    sel_env_num: z.number().int().nonnegative().max(HUNDRED_MILLION, atMost(HUNDRED_MILLION)).default(0),
    /** Test-set size; 0 = the whole test split. */
    test_env_num: z.number().int().nonnegative().max(HUNDRED_MILLION, atMost(HUNDRED_MILLION)).default(0),
    /** Score the initial, best and final skills on the test split at the end. */
    eval_test: z.boolean().default(true),
  })
  .strict();

/** Keys every environment understands; an environment adds its own keys with its own schema. */
export const EnvCoreSchema = z.object({
  /** The env: a built-in one (below) or one registered with `registerEnv`. */
  name: z.string().default(''),
  /** The initial skill file (the working directory first, then beside the config). */
  skill_init: z.string().default(''),
  /** Start from an empty skill when `skill_init` is empty or missing, instead of failing. */
  start_blank: z.boolean().default(false),
  /** Run directory when the command names none ('' = `outputs/<env>/<timestamp>`). */
  out_root: z.string().default(''),
  /** `ratio`: split `data_path` by `split_ratio`; `split_dir`: read the ready splits of `split_dir`. */
  split_mode: z.enum(['ratio', 'split_dir']).default('ratio'),
  /** A directory of ready splits (`train/`, `val/`, `test/`, or the env's own layout). */
  split_dir: z.string().default(''),
  /** The data file (or directory) that `split_ratio` splits. */
  data_path: z.string().default(''),
  /** Where the generated split is written ('' = `<run>/_generated_splits/…`). */
  split_output_dir: z.string().default(''),
  /** train:val:test proportions of a generated split. */
  split_ratio: z.string().default('2:1:7'),
  /** Seed of a generated split's shuffle. */
  split_seed: z.number().int().default(42),
  /** Seconds an item may take in the code-running envs; the original's per-call limit of an agent target, used as its `timeout_s` when set. */
  exec_timeout: z.number().positive().default(120),
  /** Concurrent rollouts. */
  workers: z.number().int().positive().max(TEN_THOUSAND, atMost(TEN_THOUSAND)).default(16),
  /** Truncate every split to its first N items (0 = no limit). */
  limit: z.number().int().nonnegative().max(HUNDRED_MILLION, atMost(HUNDRED_MILLION)).default(0),
});
export const ENV_CORE_KEYS = Object.keys(EnvCoreSchema.shape);

/** Limits on what a run may spend; reaching one stops the run, resumably (0 = no limit). */
export const BudgetSchema = z
  .object({
    /** Stop (resumably) before spending more US dollars than this (0 = no limit). */
    max_usd: z.number().nonnegative().default(0),
    /** Stop before more tokens than this, all roles together (0 = no limit). */
    max_tokens: z.number().int().nonnegative().default(0),
    /** Stop before more model calls than this (0 = no limit). */
    max_calls: z.number().int().nonnegative().default(0),
    /** Stop after this many minutes of training (0 = no limit). */
    max_minutes: z.number().nonnegative().default(0),
    /** With max_usd set, start even when a role's price is unknown (its calls are not counted), with a warning. */
    allow_unpriced: z.boolean().default(false),
  })
  .strict();

/** The response cache shared by every run on the machine. */
export const CacheSchema = z
  .object({
    /** `read_write`; `read_only`: use, never add; `off`; `replay`: a call missing from the cache is an error. */
    mode: z.enum(['read_write', 'read_only', 'off', 'replay']).default('read_write'),
    /** SQLite file; '' = skillopt/responses.sqlite under the user's cache directory. */
    path: z.string().default(''),
  })
  .strict();

/** How the run is carried out, not what it trains: a resume may change it. */
export const RunSchema = z
  .object({
    /** A Redis URL (`redis://host:6379`): rollouts go to `skillopt worker` processes through it; '' = in this process. */
    queue: z
      .string()
      .default('')
      .refine((v) => v === '' || /^rediss?:\/\//.test(v), {
        message: "expected a Redis URL such as 'redis://host:6379', or '' for rollouts in this process",
      }),
    /** A model call without a reply for this long (s) is reported on the console, then every `slow_call_every_s`. */
    slow_call_s: z.number().positive().default(15),
    /** How often (s) a call still without a reply is reported again. */
    slow_call_every_s: z.number().positive().default(30),
    /** On Ctrl-C or SIGTERM, the calls in flight get this long (s) to finish and be saved; then they are abandoned and made again on resume. */
    stop_grace_s: z.number().nonnegative().default(3),
    /** Every attempt to an endpoint refused for this long (s): the run stops, resumably, naming the URL. */
    unreachable_s: z.number().positive().default(5),
  })
  .strict();

export const ConfigSchema = z
  .object({
    model: ModelSchema.default(ModelSchema.parse({})),
    train: TrainSchema.default(TrainSchema.parse({})),
    gradient: GradientSchema.default(GradientSchema.parse({})),
    optimizer: OptimizerSchema.default(OptimizerSchema.parse({})),
    evaluation: EvaluationSchema.default(EvaluationSchema.parse({})),
    env: EnvCoreSchema.loose().default(EnvCoreSchema.parse({})),
    budget: BudgetSchema.default(BudgetSchema.parse({})),
    cache: CacheSchema.default(CacheSchema.parse({})),
    run: RunSchema.default(RunSchema.parse({})),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;
export type EnvConfig = z.infer<typeof EnvCoreSchema> & Record<string, unknown>;
export const SECTIONS = Object.keys(ConfigSchema.shape) as (keyof Config)[];
