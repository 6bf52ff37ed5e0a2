/**
 * The one path of every model call through its pool: wait for a slot, be admitted (no call is
 * sent once the run is stopping), call with a per-call timeout that covers the whole reply, and
 * on failure decide: retry (after the wait the server asked for, else exponential backoff with
 * jitter; 429s, 5xx, timeouts, dropped connections and unreadable replies; a structured reply cut
 * off by the output limit, once, at once, with twice the room), or stop at once
 * (401/403, 404, a bad request built from the configuration, a role whose every call fails
 * alike: a `FatalModelError` that ends the run; a provider asking for a longer wait than the
 * role's cap: a `RunStop` that ends it resumably), or give up after the last retry with an
 * `InfraError` that the engine records and keeps out of scores.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Admission } from './admission.ts';
import { EndpointHealth } from './endpoint-health.ts';
import { CallFailure, classifyFailure, type FailureKind } from './failure.ts';
import type { CallPool } from './call-pool.ts';
import type { ProviderResponse } from './providers/ai-sdk-model.ts';
import { cutOffError, moreRoom, withCost } from './cut-off.ts';
import { isRefusal, type EndpointReach } from './reach.ts';
import type { SlowCalls } from './slow-calls.ts';
import { FatalModelError, InfraError, RunStop, type ChatModel, type ChatRequest, type ChatResponse } from './types.ts';

export interface RetryPolicy {
  /** Attempts after the first. */
  maxRetries: number;
  /** Per-attempt timeout (ms), the whole reply included. */
  timeoutMs: number;
  /** First backoff (ms); doubles with each retry. */
  backoffMs: number;
  /** Largest backoff (ms). */
  backoffMaxMs: number;
  /** The most one call waits between its attempts, in all (ms); a provider asking for more stops the run. */
  maxWaitMs?: number;
  /** Waits at least this long are reported (ms). */
  noticeWaitMs?: number;
  /** Random source for jitter (tests pin it). */
  random?: () => number;
}

export const DEFAULT_MAX_WAIT_MS = 300_000;
const NOTICE_WAIT_MS = 5_000;

export interface SchedulerHooks {
  /** Told of every failed attempt that is not fatal; `final`: no retry follows. */
  onFailure?: (failure: CallFailure, final: boolean) => void;
  /** Told of every wait of at least `noticeWaitMs`: how long, and why. */
  onWait?: (ms: number, reason: string) => void;
  /** Decides whether a call may be sent (shared by the run's models); default: always. */
  admission?: Admission;
  /** The provider's pace shared with other processes (rollout workers), on top of the pool's own. */
  pace?: PaceGate;
  /** Where calls without a reply for long are reported. */
  slowCalls?: SlowCalls;
  /** Refused connections per endpoint, shared by the run's models: a server that is down stops the run. */
  reach?: EndpointReach;
}

/** Between refused attempts to an endpoint, while it is not yet known to be down (ms). */
const REFUSED_RETRY_MS = 500;

/** A pace shared by several processes calling one provider: a start slot, and the waits it asks for. */
export interface PaceGate {
  /** Waits until a call may start. */
  acquire(signal?: AbortSignal): Promise<void>;
  /** The provider asked to wait `ms` before the next call. */
  pause(ms: number): void;
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
  bad_request:
    'the provider rejected a request built from the configuration: check the model and its settings (options, max_output_tokens, json_schema, reasoning_effort)',
};

/** Rough size of a request in tokens, for the TPM bucket before the real count is known. */
export function estimateTokens(req: ChatRequest): number {
  let chars = req.system?.length ?? 0;
  for (const m of req.messages) {
    if (typeof m.content === 'string') chars += m.content.length;
    else for (const p of m.content) chars += p.type === 'text' ? p.text.length : 3000;
  }
  return Math.ceil(chars / 4) + (req.maxOutputTokens ?? 0);
}

/** A duration for people: `40 s`, `60 min`. */
function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds >= 120 ? `${Math.round(seconds / 60)} min` : `${seconds} s`;
}

type Attempt = { answer: ChatResponse } | { failure: CallFailure; startedAt: number };

export class ScheduledModel implements ChatModel {
  readonly id: string;
  readonly agentic?: boolean;
  readonly readsSkillFiles?: boolean;
  readonly skillFiles?: ChatModel['skillFiles'];
  private readonly health: EndpointHealth;
  private readonly admission: Admission;
  /** The endpoint the backend calls, when it has one (an agent CLI has none). */
  private readonly url: string | undefined;

  constructor(
    private readonly inner: ChatModel,
    private readonly pool: CallPool,
    private readonly policy: RetryPolicy,
    /** How errors name the role: 'model.target'. */
    private readonly label: string,
    private readonly hooks: SchedulerHooks = {},
  ) {
    this.id = inner.id;
    this.agentic = inner.agentic;
    this.readsSkillFiles = inner.readsSkillFiles;
    this.skillFiles = inner.skillFiles;
    this.url = (inner as { url?: string }).url;
    this.health = new EndpointHealth(label, inner.id, this.url);
    this.admission = hooks.admission ?? new Admission();
  }

  backoff(attempt: number): number {
    const ceiling = Math.min(this.policy.backoffMaxMs, this.policy.backoffMs * 2 ** attempt);
    return ceiling * (0.5 + 0.5 * (this.policy.random ?? Math.random)());
  }

  /** The run's stop, or the caller's abort: what ends a wait of this call. */
  private stopSignal(req: ChatRequest): AbortSignal {
    return req.signal ? AbortSignal.any([req.signal, this.admission.signal]) : this.admission.signal;
  }

  /** A wait that ends at the run's stop: then it throws the stop (or the caller's abort). */
  private async untilStop<T>(req: ChatRequest, wait: (signal: AbortSignal) => Promise<T>): Promise<T> {
    try {
      return await wait(this.stopSignal(req));
    } catch (err) {
      throw req.signal?.aborted ? err : (this.admission.stopped ?? err);
    }
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    const estimate = estimateTokens(req);
    let admitted = false;
    let call = -1;
    let waited = 0;
    // A structured reply cut off by the output limit is asked for once more, with twice the room.
    let cutOff: CallFailure | undefined;
    let sent = req;
    try {
      for (let attempt = 0; ; attempt++) {
        await this.untilStop(req, (signal) => this.pool.acquire(estimate, signal));
        let outcome: Attempt;
        try {
          if (this.hooks.pace) await this.untilStop(req, (signal) => this.hooks.pace!.acquire(signal));
          if (!admitted) {
            this.admission.enter();
            admitted = true;
            req.onSent?.();
            call = this.health.begin();
          } else if (this.admission.stopped) throw this.admission.stopped;
          outcome = await this.send(sent, estimate);
        } finally {
          this.pool.release();
        }
        if ('answer' in outcome) {
          this.health.succeeded();
          const paid = cutOff?.cutOff;
          const answer = paid ? withCost(outcome.answer, paid.usage, paid.costUsd) : outcome.answer;
          return { ...answer, retries: attempt };
        }
        const { failure } = outcome;
        const room = cutOff ? undefined : moreRoom(failure);
        if (room !== undefined) {
          cutOff = failure;
          sent = { ...req, maxOutputTokens: room };
          this.hooks.onFailure?.(failure, false);
          continue;
        }
        // Twice the room did not do: the call fails as cut off (a provider refusing that many tokens included).
        if (cutOff && (failure.kind === 'truncated' || failure.kind === 'bad_request' || failure.kind === 'rejected')) {
          this.hooks.onFailure?.(failure, true);
          throw this.giveUp(req, cutOff, attempt, { room: sent.maxOutputTokens!, again: failure });
        }
        const refusedWait = this.refusedWait(failure);
        // A refusal spends no retry: whether the endpoint is down is decided by the time refused.
        if (refusedWait !== undefined) attempt--;
        const wait = refusedWait ?? this.nextWait(req, call, failure, outcome.startedAt, attempt, waited);
        waited += wait.ms;
        this.reportWait(wait.ms, wait.reason);
        await this.untilStop(req, (signal) => sleep(wait.ms, undefined, { signal }));
      }
    } finally {
      if (admitted) this.admission.leave();
    }
  }

  /**
   * After an attempt refused at the connection: the short wait before the next one, or, when
   * every attempt to the endpoint has been refused for long enough, the stop of the run.
   * Undefined for any other failure, which shows the endpoint is there.
   */
  private refusedWait(failure: CallFailure): { ms: number; reason: string } | undefined {
    const reach = this.hooks.reach;
    // A call of one attempt (a check of the endpoint) says at once what the attempt met.
    if (!reach || !this.url || this.policy.maxRetries === 0) return undefined;
    if (!isRefusal(failure)) {
      reach.reached(this.url);
      return undefined;
    }
    this.hooks.onFailure?.(failure, false);
    const refusedFor = reach.refused(this.url);
    if (refusedFor >= reach.forMs)
      throw this.admission.halt(
        new RunStop(
          `${this.label} (${this.id}): every connection to ${this.url} was refused for ${duration(refusedFor)} (last: ${failure.message}): is the server running and listening there? ` +
            `Check ${this.label}.base_url (or the backend's *_BASE_URL variable). The run is saved: start the server, then run the same command to resume`,
          'unreachable',
        ),
      );
    return {
      ms: Math.max(10, Math.min(REFUSED_RETRY_MS, reach.forMs - refusedFor)),
      reason: 'the connection was refused',
    };
  }

  /** One attempt: its answer, or its classified failure. */
  private async send(req: ChatRequest, estimate: number): Promise<Attempt> {
    const startedAt = performance.now();
    const timer = new AbortController();
    let timedOut = false;
    const clock = setTimeout(() => {
      timedOut = true;
      timer.abort(new Error('per-call timeout'));
    }, this.policy.timeoutMs);
    // The caller's abort, the timeout, and the end of the grace after the user's stop.
    const signal = AbortSignal.any([...(req.signal ? [req.signal] : []), timer.signal, this.admission.abandoned]);
    const ended = this.hooks.slowCalls?.begin(this.label, this.id, this.policy.timeoutMs);
    try {
      const res = (await this.inner.complete({ ...req, signal })) as ProviderResponse;
      this.pool.onSuccess();
      this.pool.charge(res.usage.input + res.usage.output - estimate);
      const { waitMs, ...answer } = res;
      if (waitMs) {
        const ms = Math.min(waitMs, this.policy.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
        this.pool.pause(ms);
        this.hooks.pace?.pause(ms);
        this.reportWait(ms, "the provider's rate-limit window is used up until it resets: no call starts before then");
      }
      if (this.url) this.hooks.reach?.reached(this.url);
      return { answer };
    } catch (err) {
      if (req.signal?.aborted) throw err;
      // Given up unanswered at the end of the grace: made again when the run resumes.
      if (this.admission.abandoned.aborted && !timedOut) throw this.admission.stopped ?? err;
      // Our timer fired, whatever the SDK made of the aborted read (headers or body).
      const failure = timedOut
        ? new CallFailure(
            `${this.id}: no complete reply within ${this.policy.timeoutMs / 1000} s (${this.label}.timeout_s)`,
            'timeout',
          )
        : classifyFailure(err, this.id);
      if (!failure) throw err;
      return { failure, startedAt };
    } finally {
      clearTimeout(clock);
      ended?.();
    }
  }

  /** How long to wait before the next attempt, and why; throws when no attempt follows. */
  private nextWait(
    req: ChatRequest,
    call: number,
    failure: CallFailure,
    startedAt: number,
    attempt: number,
    waited: number,
  ): { ms: number; reason: string } {
    const hint = FATAL_HINT[failure.kind];
    if (hint) {
      // A deployment name the capability table does not know gets the effort; the way out is one setting.
      const effort =
        failure.kind === 'bad_request' && /reasoning[._]effort/i.test(failure.message)
          ? `. If the model takes no reasoning effort, set ${this.label}.capabilities.reasoning_effort: false`
          : '';
      throw new FatalModelError(`${this.label} (${this.id}): ${hint}. ${failure.message}${effort}`);
    }
    const final = !failure.retryable || attempt >= this.policy.maxRetries;
    this.hooks.onFailure?.(failure, final);
    if (failure.kind === 'rate_limit') this.pool.onRateLimit(startedAt);
    const maxWait = this.policy.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    const asked = failure.retryAfterMs;
    if (asked !== undefined && failure.retryable && asked > maxWait - waited) {
      const already = waited > 0 ? ` more, after ${duration(waited)} already,` : '';
      throw this.admission.halt(
        new RunStop(
          `${this.label} (${this.id}): the provider asked to wait ${duration(asked)}${already} before the next call (${failure.message}), more than ${this.label}.max_wait_s=${maxWait / 1000}. ` +
            `The run is saved: run the same command again later to resume, or raise ${this.label}.max_wait_s to wait that long`,
          'wait',
        ),
      );
    }
    if (asked !== undefined && failure.kind === 'rate_limit') {
      this.pool.pause(asked);
      this.hooks.pace?.pause(asked);
    }
    if (final) throw this.health.failed(call, failure) ?? this.giveUp(req, failure, attempt);
    if (asked !== undefined)
      return {
        ms: asked,
        reason: `${failure.kind === 'rate_limit' ? 'rate limited' : failure.kind} (${failure.status ? `HTTP ${failure.status}` : failure.kind}); the provider asked to wait`,
      };
    const ms = Math.min(this.backoff(attempt), maxWait - waited);
    if (ms <= 0) {
      throw new InfraError(
        `${this.label}: gave up after ${attempt + 1} attempts and ${duration(waited)} of waiting (${this.label}.max_wait_s): ${failure.message}`,
        INFRA_KIND[failure.kind],
        attempt,
      );
    }
    return {
      ms,
      reason: `backing off after ${failure.kind === 'server' && failure.status ? `HTTP ${failure.status}` : failure.kind} (attempt ${attempt + 1} of ${this.policy.maxRetries + 1})`,
    };
  }

  /** The error of a call given up (no retry left, or none would help); `retried`: a cut-off reply asked for again with more room. */
  private giveUp(
    req: ChatRequest,
    failure: CallFailure,
    attempt: number,
    retried?: { room: number; again: CallFailure },
  ): InfraError {
    if (failure.kind === 'truncated') return cutOffError(this.label, req, failure, attempt, retried);
    if (!failure.retryable)
      return new InfraError(
        `${this.label}: the provider rejected this request: ${failure.message}`,
        INFRA_KIND[failure.kind],
        attempt,
      );
    return new InfraError(
      `${this.label}: failed after ${attempt + 1} attempt${attempt ? 's' : ''}: ${failure.message}`,
      INFRA_KIND[failure.kind],
      attempt,
    );
  }

  private reportWait(ms: number, reason: string): void {
    if (ms >= (this.policy.noticeWaitMs ?? NOTICE_WAIT_MS)) this.hooks.onWait?.(ms, reason);
  }
}
