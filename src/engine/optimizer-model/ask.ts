/**
 * One optimizer call that expects a JSON reply. A reply that stays unusable, or a call that
 * failed at the provider (after its retries), gives `undefined` and a warning: each stage has a
 * fallback. Anything else propagates and stops the run (resumably): a fatal model error (bad key,
 * unknown model) and, above all, a bug of ours, which must not pass for a model's bad day.
 */
import type { z } from 'zod';
import { CallFailure } from '../../model/failure.ts';
import { StructuredOutputError, completeJson } from '../../model/structured.ts';
import { InfraError, type ChatModel, type ReasoningEffort } from '../../model/types.ts';
import type { OptimizerMeta, UpdateMode } from '../../protocol/optimizer.ts';
import type { SleepMeta } from '../../protocol/sleep.ts';

export interface OptimizerContext {
  optimizer: ChatModel;
  mode: UpdateMode;
  /** Env name, for env-specific prompt overrides. */
  env: string;
  maxTokens: number;
  reasoningEffort?: ReasoningEffort;
  warn: (message: string) => void;
}

export interface Ask<T> {
  purpose: string;
  system: string;
  user: string;
  schema: z.ZodType<T>;
  schemaName: string;
  /** The structured payload the prompt was rendered from (the simulator answers from it). */
  meta: OptimizerMeta | SleepMeta;
  maxTokens?: number;
  reasoningEffort?: ReasoningEffort;
  /** Where the call was made and what happens without it, for the warning. */
  during?: string;
  fallback?: string;
}

export async function ask<T>(ctx: OptimizerContext, q: Ask<T>): Promise<T | undefined> {
  try {
    const { value } = await completeJson(ctx.optimizer, {
      purpose: q.purpose,
      system: q.system,
      messages: [{ role: 'user', content: q.user }],
      schema: q.schema,
      schemaName: q.schemaName,
      meta: q.meta,
      maxOutputTokens: q.maxTokens ?? ctx.maxTokens,
      reasoningEffort: q.reasoningEffort ?? ctx.reasoningEffort,
    });
    return value;
  } catch (err) {
    const modelFailure =
      err instanceof StructuredOutputError || err instanceof InfraError || err instanceof CallFailure;
    if (!modelFailure) throw err;
    // Error messages can carry request details (headers, keys): only the kind is reported.
    const why = err instanceof StructuredOutputError ? err.message : `${err.kind} error`;
    ctx.warn(
      `${q.purpose} call gave no usable reply${q.during ? ` during ${q.during}` : ''} (${why})${q.fallback ? `; ${q.fallback}` : ''}`,
    );
    return undefined;
  }
}
