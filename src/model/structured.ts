/**
 * Structured replies: ask for JSON, read it (provider's parsed object, else extracted from the
 * text), validate it with the schema, and on failure ask once more, quoting the problem.
 */
import type { z } from 'zod';
import { extractJson } from './json-extract.ts';
import type { ChatModel, ChatRequest, ChatResponse } from './types.ts';

export class StructuredOutputError extends Error {
  override name = 'StructuredOutputError';
  constructor(
    message: string,
    readonly text: string,
  ) {
    super(message);
  }
}

function check<T>(schema: z.ZodType<T>, res: ChatResponse): { ok: true; value: T } | { ok: false; problem: string } {
  const candidate = res.parsed ?? extractJson(res.text);
  if (candidate === undefined) return { ok: false, problem: 'the reply holds no JSON object' };
  const result = schema.safeParse(candidate);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0]!;
  return { ok: false, problem: `${issue.path.join('.') || 'the object'}: ${issue.message}` };
}

/** A reply validated against `req.schema`; one corrective retry. */
export async function completeJson<T>(model: ChatModel, req: ChatRequest & { schema: z.ZodType<T> }): Promise<{ value: T; response: ChatResponse }> {
  const first = await model.complete(req);
  const checked = check(req.schema, first);
  if (checked.ok) return { value: checked.value, response: first };
  const retry: ChatRequest = {
    ...req,
    messages: [
      ...req.messages,
      { role: 'assistant', content: first.text },
      { role: 'user', content: `Your reply could not be used (${checked.problem}). Reply again with only the JSON object, in the format asked for.` },
    ],
  };
  const second = await model.complete(retry);
  const again = check(req.schema, second);
  if (again.ok) return { value: again.value, response: second };
  throw new StructuredOutputError(`the ${req.purpose} reply was not valid JSON of the expected shape: ${again.problem}`, second.text);
}
