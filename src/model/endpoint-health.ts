/**
 * A role whose calls all fail alike from the start (the connection refused, every request
 * rejected, every reply cut off or unreadable) is misconfigured, not unlucky: when the first calls
 * it sent have all failed the same way, each after its retries, the run stops with an error that
 * names the role, its endpoint and what to check, instead of recording every item as an
 * infrastructure error. The first calls sent, not the first to end: a fast refusal of one long
 * prompt must not outrun the slower answers sent before it. 429s are never a sign of this: they
 * say "slow down".
 */
import type { CallFailure, FailureKind } from './failure.ts';
import { FatalModelError } from './types.ts';

/** How many of a role's first calls must all fail alike. */
export const BROKEN_AFTER = 5;

const CHECK: Partial<Record<FailureKind, string>> = {
  network: 'is the server running, and are the scheme, host, port and path of base_url right?',
  timeout: 'does the server answer at all at that address, and is timeout_s long enough for this model?',
  server: 'the server fails on every request: check its logs, and that it serves this model with these settings',
  bad_response:
    'the replies cannot be read: is base_url the API root of a server of this backend (e.g. ending in /v1)?',
  rejected: "every request is refused: check the model's context size against the prompts, and the request settings",
  truncated: 'every reply runs out of output tokens before any answer: raise the output token limit',
};

export class EndpointHealth {
  private sent = 0;
  /** How each of the first calls failed (its kind and status), or 'ok' for a 429 (no sign of a wrong setting). */
  private readonly ends: (string | undefined)[] = new Array(BROKEN_AFTER).fill(undefined);
  private settled = false;

  constructor(
    /** How errors name the role: 'model.target'. */
    private readonly label: string,
    private readonly model: string,
    private readonly url: string | undefined,
  ) {}

  /** A call is sent for the first time: its number, for `failed`. */
  begin(): number {
    return this.sent++;
  }

  /** Any call answered: the endpoint works. */
  succeeded(): void {
    this.settled = true;
  }

  /** Call `call` was given up after its retries; the error that stops the run, when the role looks misconfigured. */
  failed(call: number, failure: CallFailure): FatalModelError | undefined {
    if (this.settled || call >= BROKEN_AFTER) return undefined;
    this.ends[call] = failure.kind === 'rate_limit' ? 'ok' : `${failure.kind}:${failure.status ?? ''}`;
    if (this.ends.some((e) => e === undefined)) return undefined;
    this.settled = true;
    if (!this.ends.every((e) => e === this.ends[0]) || this.ends[0] === 'ok') return undefined;
    const where = this.url ? ` to ${this.url}` : '';
    const check = failure.advice ?? CHECK[failure.kind] ?? 'check the endpoint and the model settings';
    return new FatalModelError(
      `${this.label} (${this.model}): the first ${BROKEN_AFTER} calls${where} all failed the same way and none has succeeded, so the role's configuration is wrong rather than the calls unlucky (last: ${failure.message}). ` +
        `${check} (${this.label}.base_url and its settings); then run the same command to resume`,
    );
  }
}
