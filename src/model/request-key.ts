/**
 * The identity of a model request: everything that can change the answer. Used as the key of
 * the response cache and of the run's own record of calls, so a call is never paid twice.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { filesHash } from '../skill/package/package.ts';
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

/** The identity of each request as JSON, made once: the run's record and the response cache both key on it. */
const serialized = new WeakMap<ChatRequest, { modelId: string; json: string }>();

function identityJson(modelId: string, req: ChatRequest): string {
  const known = serialized.get(req);
  if (known?.modelId === modelId) return known.json;
  const identity = {
    model: modelId,
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
    ...(req.skillFiles?.size ? { skillFiles: filesHash(req.skillFiles) } : {}),
    ...(req.activation ? { activation: req.activation } : {}),
    ...(req.workspaceFiles?.length ? { workspaceFiles: req.workspaceFiles } : {}),
    ...(req.returnFiles?.length ? { returnFiles: req.returnFiles } : {}),
  };
  const json = JSON.stringify(identity);
  serialized.set(req, { modelId, json });
  return json;
}

/** `to`, a copy of `from` with fields outside its identity changed, keeps `from`'s identity already made. */
export function carryIdentity<T extends ChatRequest>(from: ChatRequest, to: T): T {
  const known = serialized.get(from);
  if (known) serialized.set(to, known);
  return to;
}

/**
 * The key of a request: SHA-256 of its identity as JSON, `extra` placed right after the model.
 * The request is serialized once however many keys are made of it.
 */
export function requestKey(modelId: string, req: ChatRequest, extra: Record<string, unknown> = {}): string {
  let json = identityJson(modelId, req);
  const more = JSON.stringify(extra).slice(1, -1);
  if (more) {
    const head = `{"model":${JSON.stringify(modelId)}`;
    json = `${head},${more}${json.slice(head.length)}`;
  }
  return createHash('sha256').update(json).digest('hex');
}
