/**
 * Whether a call may go to a provider now. Every call is checked as it is about to be sent: once
 * a limit says stop (a budget reached) or a stop has been asked for (a provider wanting a longer
 * wait than the cap), no further call is sent; each throws the stop instead. Calls already in
 * flight go on and are recorded, so what a limit can overshoot by is bounded by the calls in
 * flight at that moment.
 */
import type { RunStop } from './types.ts';

/** A limit: given the calls in flight, the stop it asks for, if any. */
export type Limit = (inFlight: number) => RunStop | undefined;

export class Admission {
  private inFlight = 0;
  private stop: RunStop | undefined;
  private readonly aborter = new AbortController();
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly limit: Limit = () => undefined) {}

  /** Aborted once a stop is asked for: waits between retries end at once. */
  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  /** The stop asked for, if any. */
  get stopped(): RunStop | undefined {
    return this.stop;
  }

  /** Throws the stop when the run is stopping, or when a limit says so now. */
  check(): void {
    if (this.stop) throw this.stop;
    const stop = this.limit(this.inFlight);
    if (stop) throw this.halt(stop);
  }

  /** A call is about to be sent: checked, then counted in flight until `leave`. */
  enter(): void {
    this.check();
    this.inFlight++;
  }

  leave(): void {
    this.inFlight--;
    // Resolved on the next turn of the loop: the callers' continuations, which record the call in
    // the ledger, have run by then.
    if (this.inFlight === 0 && this.idleWaiters.length)
      setImmediate(() => {
        if (this.inFlight === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
      });
  }

  /** Asks for a stop (the first one asked for is kept); returns the stop in force. */
  halt(stop: RunStop): RunStop {
    if (!this.stop) {
      this.stop = stop;
      this.aborter.abort(stop);
    }
    return this.stop;
  }

  /** Resolves when no admitted call is in flight, and those that were are recorded. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
