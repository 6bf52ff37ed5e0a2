import type { ChatModel } from '../../model/types.ts';
import type { Item } from '../types.ts';

/** A scored answer. `metric` names the hard score in failure reasons ("EM=0: …"). */
export interface Score {
  hard: number;
  soft: number;
  metric: string;
  /** What the optimizer should know about this score beyond the numbers. */
  feedback?: string;
  /** Extra values recorded with the result (F1, the picked label, the judge's verdict, …). */
  details?: Record<string, unknown>;
}

export interface ScoreInput {
  /** The extracted answer. */
  prediction: string;
  /** The acceptable answers, as text. */
  golds: string[];
  /** The expected value as the data gives it (an object for JSON field matching). */
  expected: unknown;
  item: Item;
  /** The task as the target saw it (for a judge). */
  task: string;
  /** The whole reply. */
  reply: string;
}

export interface ScoreContext {
  judge?: ChatModel;
  sample?: number;
  signal?: AbortSignal;
}

export type Scorer = (input: ScoreInput, ctx: ScoreContext) => Promise<Score>;
