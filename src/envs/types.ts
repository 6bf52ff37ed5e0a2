/**
 * What a benchmark environment is: its data (three splits of items) and a rollout that runs
 * the target on one item under a skill and scores the result. Environments know nothing of
 * the trainer.
 */
import type { ZodObject } from 'zod';
import type { EnvConfig } from '../config/schema.ts';
import type { ChatModel, Usage } from '../model/types.ts';

export interface Item {
  id: string;
  /** Task type, for per-type breakdowns ('other' when absent). */
  type?: string;
  [field: string]: unknown;
}

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

export interface Env {
  readonly name: string;
  load(): Promise<Splits>;
  rollout(item: Item, skill: string, ctx: RolloutContext): Promise<Trajectory>;
  /** Benchmark-specific advice appended to the optimizer's analyst prompts. */
  readonly analystGuide?: string;
  /** Known task types, for per-type tables. */
  taskTypes?(): string[];
  /** True when rollouts score with the judge model (`ctx.judge`); the judge is built only then. */
  readonly usesJudge?: boolean;
}

export interface EnvContext {
  /** Directory of the config file given on the command line. */
  configDir: string;
  /**
   * A path-valued `env.<key>` made absolute: relative to the working directory if it exists
   * there, else to the config file that set the key.
   */
  resolvePath(key: string, value: string): string;
  /** Where the run writes (generated splits go here). */
  outRoot?: string;
}

export interface EnvFactory {
  name: string;
  aliases?: string[];
  /** The env's own config keys (beyond the core `env.*` keys), with defaults. */
  optionsSchema: ZodObject;
  /**
   * Keys of the original's configs that are accepted but not supported yet: key → what is not
   * supported. Config loading drops them with one warning each.
   */
  unsupportedOptions?: Record<string, string>;
  create(config: EnvConfig, ctx: EnvContext): Env;
}
