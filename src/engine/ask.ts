/**
 * One optimizer call that expects a JSON reply. A reply that stays unusable, or a call that
 * * fails for any reason but a fatal one, gives `undefined` and a warning (each stage has a fallback);
 * a fatal model error (bad key, unknown model) propagates and stops the run.
 */
import type { z } from 'zod';
import { StructuredOutputError, completeJson } from '../model/structured.ts';
import { FatalModelError, InfraError, type ChatModel, type ReasoningEffort } from '../model/types.ts';
import type { UpdateMode } from './protocol.ts';

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
  meta: unknown;
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
    if (err instanceof FatalModelError) throw err;
    // Error messages can carry request details (headers, keys): only the kind is reported.
    const why = err instanceof StructuredOutputError ? err.message : err instanceof InfraError ? `${err.kind} error` : `${(err as Error)?.name ?? 'error'} from the model call`;
    ctx.warn(`${q.purpose} call gave no usable reply${q.during ? ` during ${q.during}` : ''} (${why})${q.fallback ? `; ${q.fallback}` : ''}`);
    return undefined;
  }
}
