/**
 * Structured replies: ask for JSON (the provider's JSON-schema mode where the role allows it,
 * else the schema described in the prompt), read it (the provider's parsed object, else the
 * object found in the text, repaired if need be, but never one the text ends inside: a reply cut
 * off is not made whole), validate it with the schema, and on failure ask once more, quoting what
 * was wrong.
 */
import type { z } from 'zod';
import { endsInsideObject, extractJson } from './json-extract.ts';
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

/** What was wrong with an object, in words a model can act on (first three issues). */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || 'the object'}: ${issue.message}`)
    .join('; ');
}

/** The reply text as a valid object of `schema`, or what is wrong with it. */
export function validReply<T>(
  schema: z.ZodType<T>,
  text: string,
): { ok: true; value: T } | { ok: false; problem: string } {
  const candidate = extractJson(text, { whole: true });
  if (candidate === undefined)
    return {
      ok: false,
      problem: endsInsideObject(text)
        ? 'the reply ends before its JSON object does (cut off?)'
        : 'the reply holds no JSON object',
    };
  const result = schema.safeParse(candidate);
  return result.success ? { ok: true, value: result.data } : { ok: false, problem: describeIssues(result.error) };
}

function check<T>(schema: z.ZodType<T>, res: ChatResponse): { ok: true; value: T } | { ok: false; problem: string } {
  if (res.parsed !== undefined) {
    const result = schema.safeParse(res.parsed);
    if (result.success) return { ok: true, value: result.data };
  }
  return validReply(schema, res.text);
}

/** A reply validated against `req.schema`; one corrective retry. */
export async function completeJson<T>(
  model: ChatModel,
  req: ChatRequest & { schema: z.ZodType<T> },
): Promise<{ value: T; response: ChatResponse }> {
  const first = await model.complete(req);
  const checked = check(req.schema, first);
  if (checked.ok) return { value: checked.value, response: first };
  const retry: ChatRequest = {
    ...req,
    messages: [
      ...req.messages,
      { role: 'assistant', content: first.text },
      {
        role: 'user',
        content: `Your reply could not be used (${checked.problem}). Reply again with only the JSON object, in the format asked for.`,
      },
    ],
  };
  const second = await model.complete(retry);
  const again = check(req.schema, second);
  if (again.ok) return { value: again.value, response: second };
  throw new StructuredOutputError(
    `the ${req.purpose} reply was not valid JSON of the expected shape: ${again.problem}`,
    second.text,
  );
}
