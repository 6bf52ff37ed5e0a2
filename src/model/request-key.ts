/**
 * The identity of a model request: everything that can change the answer. Used as the key of
 * the response cache and of the run's own record of calls, so a call is never paid twice.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ChatRequest } from './types.ts';

const schemaCache = new WeakMap<object, unknown>();

/** The JSON Schema of a zod schema, computed once per schema object. */
function jsonSchemaOf(schema: NonNullable<ChatRequest['schema']>): unknown {
  let js = schemaCache.get(schema);
  if (js === undefined) {
    js = z.toJSONSchema(schema, { unrepresentable: 'any' });
    schemaCache.set(schema, js);
  }
  return js;
}

export function requestKey(modelId: string, req: ChatRequest, extra: Record<string, unknown> = {}): string {
  const identity = {
    model: modelId,
    ...extra,
    system: req.system ?? '',
    messages: req.messages,
    schema: req.schema ? jsonSchemaOf(req.schema) : null,
    tools: req.tools ?? null,
    maxOutputTokens: req.maxOutputTokens ?? null,
    temperature: req.temperature ?? null,
    reasoningEffort: req.reasoningEffort ?? null,
    sample: req.sample ?? 0,
    // The simulator answers from the structured payload, so it is part of the identity there.
    meta: modelId.startsWith('sim:') ? (req.meta ?? null) : null,
    // Only agent targets read these; present only when set, so other requests keep their keys.
    ...(req.skill !== undefined ? { skill: req.skill } : {}),
    ...(req.workspaceFiles?.length ? { workspaceFiles: req.workspaceFiles } : {}),
  };
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex');
}
