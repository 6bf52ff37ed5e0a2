/**
 * A role whose calls all fail alike from the start (the connection refused, every request
 * rejected, every reply cut off or unreadable) is misconfigured, not unlucky: once its first
 * calls have failed the same way, each after its retries, and none has ever succeeded, the run
 * stops with an error that names the role, its endpoint and what to check, instead of recording
 * every item as an infrastructure error. 429s are never a sign of this: they say "slow down".
 */
import type { CallFailure, FailureKind } from './failure.ts';
import { FatalModelError } from './types.ts';

/** Calls given up the same way, with none succeeding, before the role counts as misconfigured. */
export const BROKEN_AFTER = 5;

const CHECK: Partial<Record<FailureKind, string>> = {
  network: 'is the server running, and are the scheme, host, port and path of base_url right?',
  timeout: 'does the server answer at all at that address, and is timeout_s long enough for this model?',
  server: 'the server fails on every request: check its logs, and that the model and its settings are ones it serves',
  bad_response: 'the replies cannot be read: is base_url the API root of a server of this backend (e.g. ending in /v1)?',
  rejected: 'every request is refused: check the model\'s context size against the prompts, and the request settings',
  truncated: 'every reply runs out of output tokens before any answer: raise the output token limit',
};

export class EndpointHealth {
  private succeeded = false;
  private failures = 0;
  private signature: string | undefined;

  constructor(
    /** How errors name the role: 'model.target'. */
    private readonly label: string,
    private readonly model: string,
    private readonly url: string | undefined,
  ) {}

  success(): void {
    this.succeeded = true;
  }

  /** A call given up after its retries; the error that stops the run, when the role looks misconfigured. */
  failed(failure: CallFailure): FatalModelError | undefined {
    if (this.succeeded || failure.kind === 'rate_limit') return undefined;
    const signature = `${failure.kind}:${failure.status ?? ''}`;
    if (this.signature !== undefined && signature !== this.signature) {
      // Failures of several kinds have several causes: not one setting to fix.
      this.succeeded = true;
      return undefined;
    }
    this.signature = signature;
    if (++this.failures < BROKEN_AFTER) return undefined;
    const where = this.url ? ` to ${this.url}` : '';
    const check = CHECK[failure.kind] ?? 'check the endpoint and the model settings';
    return new FatalModelError(
      `${this.label} (${this.model}): the first ${this.failures} calls${where} all failed the same way and none has succeeded, so the role's configuration is wrong rather than the calls unlucky (last: ${failure.message}). ` +
        `${check} (${this.label}.base_url and its settings); then run the same command to resume`,
    );
  }
}
