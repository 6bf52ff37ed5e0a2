/**
 * What a benchmark environment is: its data (three splits of items) and a rollout that runs
 * the target on one item under a skill and scores the result. Environments know nothing of
 * the trainer.
 */
import type { EnvEntry } from '../config/catalog.ts';
import type { EnvConfig } from '../config/schema.ts';
import type { ProbeForm } from '../config/audit-schema.ts';
import type { AgentTrace } from '../model/harness/trace.ts';
import type { ChatModel, Usage } from '../model/types.ts';

export interface Item {
  id: string;
  /** Task type, for per-type breakdowns ('other' when absent). */
  type?: string;
  [field: string]: unknown;
}

export type SplitName = 'train' | 'val' | 'test';

export interface Splits {
  train: Item[];
  val: Item[];
  test: Item[];
  /** What the user should know about the data, such as items left out (shown as warnings). */
  warnings?: string[];
}

/** One line of a trajectory, as the optimizer will read it. */
export type ConversationEntry =
  | { role: 'system' | 'user' | 'assistant' | 'agent' | 'tool'; content: string }
  | { type: 'tool_call'; cmd: string; obs: string }
  | { step: number; action: string; env_feedback: string; reasoning?: string };

export interface TrajectoryError {
  kind: string;
  message: string;
}

export interface Trajectory {
  id: string;
  /** Primary score in [0, 1] (usually 0 or 1). */
  hard: number;
  /** Partial credit in [0, 1]. */
  soft: number;
  taskType?: string;
  /** The task as a person would state it (for reflection and comparison pairs). */
  task?: string;
  predicted?: string;
  expected?: unknown;
  /** Why the item failed, short; its prefix before ':' groups failures into patterns. */
  failReason?: string;
  /** What the optimizer should know about this rollout (evaluation details). */
  feedback?: string;
  conversation?: ConversationEntry[];
  systemPrompt?: string;
  userPrompt?: string;
  usage?: Usage;
  /** What an agent target did in each of its runs (tools, files, errors), in order; absent for chat models. */
  traces?: AgentTrace[];
  /**
   * An activation rollout: whether the skill should have loaded for the query, and whether it
   * did; `task`, the reply's score, when the query's task is scored too.
   */
  activation?: { should: boolean; loaded: boolean; task?: number };
  /** Set when the rollout could not run (infrastructure): then it is not scored. */
  error?: TrajectoryError;
}

export interface RolloutContext {
  target: ChatModel;
  /** The judge model, for envs that score with one. */
  judge?: ChatModel;
  /** Seed for anything random in this rollout (choice shuffling, …). */
  seed: number;
  /** Sample index: distinct repeats of the same item are distinct calls. */
  sample?: number;
  /**
   * A training step's rollout (not an evaluation): an env may give the target feedback here that
   * evaluation must not give, such as which answer cells are wrong (SpreadsheetBench `multi`).
   */
  training?: boolean;
  signal?: AbortSignal;
}

/**
 * An environment: its data, and a rollout that runs the target on one item under a skill and
 * scores the result. The contract between an env and the engine:
 *
 * `load()` returns the three splits; item ids are unique across them (the engine checks and
 * refuses duplicates, since scores are cached by id). A problem with the user's data is a
 * `UserError` naming the file, the record and the field.
 *
 * `rollout(item, skill, ctx)` runs `ctx.target` (and `ctx.judge`, for an env that `usesJudge`)
 * on this one item and returns its `Trajectory`:
 * - An answer is scored: `hard` and `soft` in [0, 1], with `failReason` and `feedback` saying
 *   what the optimizer should learn from a failure.
 * - When the item could not be run (a model call that failed after its retries, a timeout, an
 *   unusable structured reply of the judge), the rollout either returns a trajectory with `error`
 *   set, or lets the model's error propagate (`InfraError`, `CallFailure`,
 *   `StructuredOutputError`): the engine records that item as an infrastructure error, keeps it
 *   out of every score, and runs it again where a score needs it. It is never scored as a wrong
 *   answer.
 * - Any other exception stops the run (resumably) once the items in flight are done: a
 *   `UserError` for a problem in the user's input (a broken custom scorer), a `FatalModelError`
 *   (a rejected key), and anything else, which is taken for a bug. So a rollout must never throw
 *   for one item's bad luck anything but the model's errors above.
 * - It must never: score an item it could not run; show the target (or put in the trajectory's
 *   prompt) the expected answer, or anything derived from it beyond what the benchmark gives, and
 *   in evaluation (`ctx.training` unset) no feedback on its answer; or keep state between
 *   rollouts that changes a later item's result.
 * - It may be called concurrently (up to `env.workers` at once), and again for the same item
 *   with another `ctx.sample`; the same item, skill, target, sample and seed must give the same
 *   result, since the engine caches it and never runs it twice.
 *
 * In return the engine guarantees: each rollout is run at most once per (skill, item, target,
 * sample, seed) and its result is journaled, so a resumed run does not pay for it again; calls
 * through `ctx.target` and `ctx.judge` go through the role's pool, retries, rate limits, cache
 * and ledger; once the run is asked to stop, a new call through them fails with a fatal error
 * that ends the unfinished step, which is not committed (the calls in flight finish and are
 * journaled); the env sees only the skill's text, never the optimizer or the edits.
 */
export interface Env {
  readonly name: string;
  load(): Promise<Splits>;
  rollout(item: Item, skill: string, ctx: RolloutContext): Promise<Trajectory>;
  /** Benchmark-specific advice appended to the optimizer's analyst prompts. */
  readonly analystGuide?: string;
  /** Known task types, for per-type tables. */
  taskTypes?(): string[];
  /**
   * At most this many target calls one rollout makes (the turns of a multi-turn episode), for the
   * dry-run planner; 1 when absent. `agentTarget`: the target is an agent CLI running its own tools.
   */
  maxTargetCalls?(agentTarget: boolean): number;
  /** True when rollouts score with the judge model (`ctx.judge`); the judge is built only then. */
  readonly usesJudge?: boolean;
  /**
   * What the audit reads of an item: the request the target is given and the answers that score.
   * Absent: the common fields (`question`, `input`, … and `expected`, `answer`, …).
   */
  auditView?(item: Item): { input: string; answers: string[] };
  /**
   * The texts the scorer rewards beyond the answer itself (a regex scorer's literal parts, the
   * strings a custom scorer's code looks for): a skill that tells the target to write them is
   * flagged by the audit. Absent or empty: the scorer compares answers only.
   */
  scorerChecks?(): string[];
  /**
   * A scorer independent of the one rollouts use, for the audit's second look at an accepted gain:
   * a rule when rollouts are judged, the judge model (`model.judge`) when a rule scores them.
   * Absent: the env has none.
   */
  readonly secondScorer?: SecondScorer;
  /**
   * The item with its request recast in a surface form that asks the same thing (`src/audit/probes.ts`),
   * under a new id; undefined when the form does not apply to it. Absent: the env makes no variants.
   */
  probe?(item: Item, form: ProbeForm): Item | undefined;
}

export interface SecondScorer {
  /** `rule`: no model call; `judge`: one call of the judge model per answer. */
  readonly kind: 'rule' | 'judge';
  /** The answer of a finished rollout scored again, 0 to 1; undefined when this scorer cannot tell. */
  score(t: Trajectory, item: Item, ctx: { judge?: ChatModel; signal?: AbortSignal }): Promise<number | undefined>;
}

export interface EnvContext {
  /** Directory of the config file given on the command line. */
  configDir: string;
  /**
   * A path-valued `env.<key>` made absolute: relative to the working directory if it exists
   * there, else to the config file that set the key.
   */
  resolvePath(key: string, value: string): string;
  /** What is said of a path-valued `env.<key>` that does not exist: the key, the value, who set it, where it was looked for. */
  missingPath?(key: string, value: string): string;
  /** Where the run writes (generated splits go here). */
  outRoot?: string;
}

/** An env: what the config knows of it (`EnvEntry`: names, options schema) and its factory. */
export interface EnvFactory extends EnvEntry {
  create(config: EnvConfig, ctx: EnvContext): Env;
}
