/**
 * The one path of every model call through its pool: wait for a slot, call with a per-call
 * timeout, and on failure decide: retry (429 after the wait the server asked for, else
 * exponential backoff with jitter; 5xx, timeouts, dropped connections and unreadable replies
 * likewise), or stop at once (401/403, 404, a bad request built from the configuration: a
 * `FatalModelError` that ends the run), or give up after the last retry with an `InfraError`
 * that the engine records and keeps out of scores.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CallFailure, classifyFailure, type FailureKind } from './failure.ts';
import type { Pool } from './pool.ts';
import type { ProviderResponse } from './providers/ai-sdk-model.ts';
import { FatalModelError, InfraError, type ChatModel, type ChatRequest, type ChatResponse } from './types.ts';

export interface RetryPolicy {
  /** Attempts after the first. */
  maxRetries: number;
  /** Per-attempt timeout (ms). */
  timeoutMs: number;
  /** First backoff (ms); doubles with each retry. */
  backoffMs: number;
  /** Largest backoff (ms). */
  backoffMaxMs: number;
  /** Longest wait honoured from a `retry-after` (ms). */
  maxRetryAfterMs?: number;
  /** Random source for jitter (tests pin it). */
  random?: () => number;
}

const INFRA_KIND: Record<FailureKind, InfraError['kind']> = {
  rate_limit: 'rate_limit',
  timeout: 'timeout',
  server: 'server',
  network: 'network',
  bad_response: 'bad_response',
  rejected: 'other',
  truncated: 'truncated',
  auth: 'other',
  not_found: 'other',
  bad_request: 'other',
};

const FATAL_HINT: Partial<Record<FailureKind, string>> = {
  auth: 'the provider refused the credentials: check the API key (or token) and its access to this model',
  not_found: 'the model, deployment or endpoint does not exist: check the model name and base_url',
  bad_request: 'the provider rejected a request built from the configuration: check the model and its settings (options, max_output_tokens, json_schema, reasoning_effort)',
};

/**
 * The setting that gave a call its output token limit: the call's own (the env's for rollouts,
 * the judge's, the optimizer's for its calls), else the role's.
 */
function outputLimitSetting(label: string, req: ChatRequest): string {
  if (req.maxOutputTokens === undefined) return `${label}.max_output_tokens`;
  if (req.purpose === 'judge') return 'env.scorer.max_output_tokens';
  if (label === 'model.target') return 'env.max_completion_tokens';
  return /rewrite/.test(req.purpose) ? 'model.rewrite_max_completion_tokens' : 'model.optimizer_max_completion_tokens';
}

/** Rough size of a request in tokens, for the TPM bucket before the real count is known. */
export function estimateTokens(req: ChatRequest): number {
  let chars = req.system?.length ?? 0;
  for (const m of req.messages) {
    if (typeof m.content === 'string') chars += m.content.length;
    else for (const p of m.content) chars += p.type === 'text' ? p.text.length : 3000;
  }
  return Math.ceil(chars / 4) + (req.maxOutputTokens ?? 0);
}

export class ScheduledModel implements ChatModel {
  readonly id: string;

  constructor(
    private readonly inner: ChatModel,
    private readonly pool: Pool,
    private readonly policy: RetryPolicy,
    /** How errors name the role: 'model.target'. */
    private readonly label: string,
    /** Told of every failed attempt that is not fatal; `final`: no retry follows. */
    private readonly onFailure?: (failure: CallFailure, final: boolean) => void,
    /** Applied to the messages of the errors it throws (a provider may echo a key). */
    private readonly redact: (text: string) => string = (t) => t,
  ) {
    this.id = inner.id;
  }

  backoff(attempt: number): number {
    const ceiling = Math.min(this.policy.backoffMaxMs, this.policy.backoffMs * 2 ** attempt);
    return ceiling * (0.5 + 0.5 * (this.policy.random ?? Math.random)());
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    const estimate = estimateTokens(req);
    for (let attempt = 0; ; attempt++) {
      await this.pool.acquire(estimate, req.signal);
      const startedAt = performance.now();
      const timer = new AbortController();
      let timedOut = false;
      const clock = setTimeout(() => {
        timedOut = true;
        timer.abort(new Error('per-call timeout'));
      }, this.policy.timeoutMs);
      const signal = req.signal ? AbortSignal.any([req.signal, timer.signal]) : timer.signal;
      let failure: CallFailure;
      try {
        const res = (await this.inner.complete({ ...req, signal })) as ProviderResponse;
        this.pool.onSuccess();
        this.pool.charge(res.usage.input + res.usage.output - estimate);
        const { waitMs, ...answer } = res;
        if (waitMs) this.pool.pause(Math.min(waitMs, this.policy.maxRetryAfterMs ?? 600_000));
        return { ...answer, retries: attempt };
      } catch (err) {
        if (req.signal?.aborted) throw err;
        // Our timer fired, whatever the SDK made of the aborted read (headers or body).
        const classified = timedOut
          ? new CallFailure(`${this.id}: no complete reply within ${this.policy.timeoutMs / 1000} s (${this.label}.timeout_s)`, 'timeout')
          : classifyFailure(err, this.id);
        if (!classified) throw err;
        failure = classified;
      } finally {
        clearTimeout(clock);
        this.pool.release();
      }
      const hint = FATAL_HINT[failure.kind];
      if (hint) {
        // A deployment name the capability table does not know gets the effort; the way out is one setting.
        const effort = failure.kind === 'bad_request' && /reasoning[._]effort/i.test(failure.message) ? `. If the model takes no reasoning effort, set ${this.label}.capabilities.reasoning_effort: false` : '';
        throw new FatalModelError(this.redact(`${this.label} (${this.id}): ${hint}. ${failure.message}${effort}`));
      }
      const final = !failure.retryable || attempt >= this.policy.maxRetries;
      this.onFailure?.(failure, final);
      if (failure.kind === 'truncated') throw new InfraError(this.redact(`${this.label}: ${failure.message}: raise ${outputLimitSetting(this.label, req)}`), 'truncated', attempt);
      if (!failure.retryable) throw new InfraError(this.redact(`${this.label}: the provider rejected this request: ${failure.message}`), INFRA_KIND[failure.kind], attempt);
      const asked = failure.retryAfterMs !== undefined ? Math.min(failure.retryAfterMs, this.policy.maxRetryAfterMs ?? 600_000) : undefined;
      if (failure.kind === 'rate_limit') {
        this.pool.onRateLimit(startedAt);
        if (asked !== undefined) this.pool.pause(asked);
      }
      if (attempt >= this.policy.maxRetries) {
        throw new InfraError(this.redact(`${this.label}: failed after ${attempt + 1} attempt${attempt ? 's' : ''}: ${failure.message}`), INFRA_KIND[failure.kind], attempt);
      }
      await sleep(asked ?? this.backoff(attempt), undefined, req.signal ? { signal: req.signal } : undefined);
    }
  }
}
