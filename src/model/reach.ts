/**
 * Whether an endpoint can be reached at all. A connection refused (or a host that does not
 * resolve) says nothing a backoff can change within a run: when every attempt to one endpoint,
 * from any role, has been refused for `forMs`, the server is down, and the run stops (resumably)
 * naming the URL, instead of climbing every call's backoff ladder first. Any other outcome (an
 * answer, an HTTP error, a reset) shows the endpoint is there and ends the streak.
 */
import type { CallFailure } from './failure.ts';

/** Failures where no connection was made: nothing listens there, or the host is not found. */
const NO_CONNECTION = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|ConnectionRefused/;

export function isRefusal(failure: CallFailure): boolean {
  return failure.kind === 'network' && NO_CONNECTION.test(failure.message);
}

export class EndpointReach {
  /** When the current run of refusals began, per endpoint (ms, the tracker's clock). */
  private readonly refusedSince = new Map<string, number>();

  constructor(
    /** How long every attempt must have been refused before the endpoint counts as down (ms). */
    readonly forMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** An attempt to `url` was refused: how long attempts to it have been refused, without a break (ms). */
  refused(url: string): number {
    const now = this.now();
    const since = this.refusedSince.get(url);
    if (since === undefined) {
      this.refusedSince.set(url, now);
      return 0;
    }
    return now - since;
  }

  /** An attempt to `url` got through to the server (whatever it answered). */
  reached(url: string): void {
    this.refusedSince.delete(url);
  }
}
