/**
 * What went wrong in one attempt at a provider call, and whether another attempt can help.
 * Providers turn whatever their SDK throws into a `CallFailure`; the scheduler reads its
 * `kind` to retry, back off, slow down or give up.
 */
import { APICallError } from '@ai-sdk/provider';
import type { Usage } from './types.ts';

export type FailureKind =
  /** 429: slow down and retry (after `retryAfterMs` when the server says so). */
  | 'rate_limit'
  /** No answer within the per-call timeout, or a 408. */
  | 'timeout'
  /** 5xx: the provider failed; retry with backoff. */
  | 'server'
  /** The connection was refused, reset or dropped. */
  | 'network'
  /** An answer that cannot be read: malformed JSON, no choices, an empty reply. */
  | 'bad_response'
  /** 401/403, a missing key, exhausted quota: no retry, the run must stop. */
  | 'auth'
  /** 404: the model or deployment does not exist, or the base URL is wrong. */
  | 'not_found'
  /** 400/422 on a request we built from the configuration: no retry, the run must stop. */
  | 'bad_request'
  /** 400 about this one request only (context too long, content filter): no retry, not fatal. */
  | 'rejected'
  /**
   * The output token limit ran out: before any answer (a reasoning model that thought too long: a
   * retry would too), or in the middle of a structured reply (`cutOff` set: retried once with
   * more room, never repaired into an object).
   */
  | 'truncated';

const RETRYABLE: ReadonlySet<FailureKind> = new Set(['rate_limit', 'timeout', 'server', 'network', 'bad_response']);

export class CallFailure extends Error {
  override name = 'CallFailure';
  constructor(
    message: string,
    readonly kind: FailureKind,
    readonly status?: number,
    /** The wait the server asked for (retry-after and its relatives), in ms. */
    readonly retryAfterMs?: number,
    /** What to check when every call fails this way, when the kind alone would point elsewhere. */
    readonly advice?: string,
    /** A structured reply cut off by the output limit: the limit in force, and what the cut-off reply cost. */
    readonly cutOff?: { outputLimit?: number; usage: Usage; costUsd: number | null },
  ) {
    super(message);
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}

/** Lower-cased header map from anything header-like. */
export function headerMap(headers: Record<string, string | undefined> | Headers | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  for (const [k, v] of entries) if (v !== undefined) out[k.toLowerCase()] = v;
  return out;
}

/** A duration such as OpenAI's `6m0s`, `1.5s`, `250ms`, in ms. */
function parseDuration(text: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let matched = false;
  for (const m of text.matchAll(re)) {
    matched = true;
    const n = Number(m[1]);
    total += m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : m[2] === 'm' ? n * 60_000 : n * 3_600_000;
  }
  return matched ? total : undefined;
}

/** Seconds, an HTTP date, or an RFC 3339 instant, as ms from `now`. */
function parseWhen(text: string, now: number): number | undefined {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * How long the server asked us to wait: `retry-after-ms`, `retry-after` (seconds or a date),
 * else, when a rate-limit window is exhausted, the time until it resets (OpenAI's
 * `x-ratelimit-*` and Anthropic's `anthropic-ratelimit-*`).
 */
export function retryAfterMs(headers: Record<string, string>, now = Date.now()): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms);
  const ra = headers['retry-after'];
  if (ra) {
    const v = parseWhen(ra, now);
    if (v !== undefined) return v;
  }
  return exhaustedWindowMs(headers, now);
}

/** When a response says no requests or tokens remain in the window: the time until it resets. */
export function exhaustedWindowMs(headers: Record<string, string>, now = Date.now()): number | undefined {
  let wait: number | undefined;
  for (const what of ['requests', 'tokens', 'input-tokens', 'output-tokens']) {
    for (const [remainingKey, resetKey, parse] of [
      [
        `x-ratelimit-remaining-${what}`,
        `x-ratelimit-reset-${what}`,
        (t: string) => parseDuration(t) ?? parseWhen(t, now),
      ],
      [`anthropic-ratelimit-${what}-remaining`, `anthropic-ratelimit-${what}-reset`, (t: string) => parseWhen(t, now)],
    ] as const) {
      const remaining = headers[remainingKey];
      const reset = headers[resetKey];
      if (remaining === undefined || reset === undefined || Number(remaining) > 0) continue;
      const v = parse(reset);
      if (v !== undefined) wait = Math.max(wait ?? 0, v);
    }
  }
  return wait;
}

/** Per-request rejections that a retry cannot fix but that say nothing about the configuration. */
const PER_REQUEST =
  /context[_ ]length|maximum context|too many tokens|prompt is too long|content[_ ]?(filter|policy|management)|safety system|input is too long|string too long/i;
/** 429s that no wait will fix. */
const NO_QUOTA = /insufficient_quota|exceeded your current quota|billing|credit balance/i;

function short(text: string | undefined, max = 300): string {
  if (!text) return '';
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

/** The classified failure of an HTTP status with its body and headers. */
export function failureFromStatus(
  status: number,
  message: string,
  body: string | undefined,
  headers: Record<string, string>,
  where: string,
): CallFailure {
  const detail = short(message && message !== 'Bad Request' ? message : body) || `HTTP ${status}`;
  const text = `${where}: HTTP ${status}: ${detail}`;
  if (status === 429) {
    if (NO_QUOTA.test(`${message} ${body ?? ''}`))
      return new CallFailure(`${text} (the account has no quota left)`, 'auth', status);
    return new CallFailure(text, 'rate_limit', status, retryAfterMs(headers));
  }
  if (status === 401 || status === 403) return new CallFailure(text, 'auth', status);
  if (status === 404) return new CallFailure(text, 'not_found', status);
  if (status === 408) return new CallFailure(text, 'timeout', status, retryAfterMs(headers));
  if (status >= 500) return new CallFailure(text, 'server', status, retryAfterMs(headers));
  if (status >= 200 && status < 300)
    return new CallFailure(`${where}: unreadable reply: ${detail}`, 'bad_response', status);
  if (status === 400 || status === 413 || status === 422) {
    return new CallFailure(text, PER_REQUEST.test(`${message} ${body ?? ''}`) ? 'rejected' : 'bad_request', status);
  }
  // 409 and other 4xx: the provider's own conflicts and hiccups; a retry is the usual cure.
  return new CallFailure(text, 'server', status, retryAfterMs(headers));
}

const NETWORK_CODES =
  /ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|UND_ERR|socket|other side closed|terminated|ConnectionClosed|ConnectionRefused/i;

/**
 * Anything an SDK call threw, classified; undefined for errors that are not about the call
 * (a bug of ours), which must surface as they are.
 */
export function classifyFailure(err: unknown, where: string): CallFailure | undefined {
  if (err instanceof CallFailure) return err;
  if (APICallError.isInstance(err)) {
    // A failure of ours raised while the SDK read the body (the reply size limit).
    if (err.cause instanceof CallFailure) return err.cause;
    const headers = headerMap(err.responseHeaders);
    if (err.statusCode !== undefined)
      return failureFromStatus(err.statusCode, err.message, err.responseBody, headers, where);
    const cause = err.cause as { code?: string; message?: string } | undefined;
    return new CallFailure(`${where}: ${short(err.message)}${cause?.code ? ` (${cause.code})` : ''}`, 'network');
  }
  const e = err as { name?: string; message?: string; code?: string; cause?: { code?: string; message?: string } };
  const name = e?.name ?? '';
  if (
    name === 'AI_JSONParseError' ||
    name === 'AI_TypeValidationError' ||
    name === 'AI_InvalidResponseDataError' ||
    name === 'AI_EmptyResponseBodyError' ||
    name === 'AI_NoContentGeneratedError'
  ) {
    return new CallFailure(`${where}: unreadable reply: ${short(e.message)}`, 'bad_response');
  }
  const text = `${e?.message ?? ''} ${e?.code ?? ''} ${e?.cause?.code ?? ''} ${e?.cause?.message ?? ''}`;
  if (name === 'TypeError' && /fetch failed/i.test(text))
    return new CallFailure(`${where}: connection failed: ${short(e?.cause?.message ?? e.message)}`, 'network');
  if (NETWORK_CODES.test(text)) return new CallFailure(`${where}: connection failed: ${short(text)}`, 'network');
  return undefined;
}
