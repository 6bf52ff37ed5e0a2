/**
 * Whether a call may go to a provider now. Every call is checked as it is about to be sent: once
 * a limit says stop (a budget reached) or a stop has been asked for (a provider wanting a longer
 * wait than the cap, an endpoint that cannot be reached), no further call is sent; each throws the
 * stop instead. Calls already in flight go on and are recorded, so what a limit can overshoot by
 * is bounded by the calls in flight at that moment.
 *
 * The user's stop (Ctrl-C, SIGTERM) gives the calls in flight a short grace to finish and be
 * recorded; then they are abandoned (`abandoned` aborts): their replies, if any, are not waited
 * for, and a resumed run makes them again. What finished in time is recorded and never paid twice.
 */
import { setMaxListeners } from 'node:events';
import type { RunStop } from './types.ts';

/** A limit: given the calls in flight, the stop it asks for, if any. */
export type Limit = (inFlight: number) => RunStop | undefined;

export interface AdmissionOptions {
  /** How long the calls in flight get to finish once the user stops the run (ms). */
  graceMs?: number;
  /** Told when calls in flight are abandoned at the end of the grace: how many. */
  onAbandon?: (calls: number, graceMs: number) => void;
}

const DEFAULT_GRACE_MS = 3000;

export class Admission {
  private inFlight = 0;
  private stop: RunStop | undefined;
  private readonly aborter = new AbortController();
  private readonly abandon = new AbortController();
  private graceTimer: NodeJS.Timeout | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly limit: Limit = () => undefined,
    private readonly options: AdmissionOptions = {},
  ) {
    // Every call waiting for a pool's slot listens for the stop (and stops listening once it starts):
    // hundreds at once are a run's normal state, not a leak for Node to warn about.
    setMaxListeners(0, this.aborter.signal, this.abandon.signal);
  }

  /** Aborted once a stop is asked for: waits between retries and for a pool's slot end at once. */
  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  /** Aborted when the calls still in flight are given up (the grace after the user's stop is over). */
  get abandoned(): AbortSignal {
    return this.abandon.signal;
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
    if (this.inFlight === 0 && this.graceTimer) clearTimeout(this.graceTimer);
    // Resolved on the next turn of the loop: the callers' continuations, which record the call in
    // the ledger, have run by then.
    if (this.inFlight === 0 && this.idleWaiters.length)
      setImmediate(() => {
        if (this.inFlight === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
      });
  }

  /**
   * Asks for a stop (the first one asked for is kept); returns the stop in force. The user's stop
   * starts the grace of the calls in flight, even after a stop of another kind.
   */
  halt(stop: RunStop): RunStop {
    if (!this.stop) {
      this.stop = stop;
      this.aborter.abort(stop);
    }
    if (stop.reason === 'interrupted' && !this.graceTimer && !this.abandon.signal.aborted) {
      const graceMs = this.options.graceMs ?? DEFAULT_GRACE_MS;
      this.graceTimer = setTimeout(() => {
        if (this.inFlight > 0) this.options.onAbandon?.(this.inFlight, graceMs);
        this.abandon.abort(this.stop);
      }, graceMs);
      this.graceTimer.unref();
    }
    return this.stop;
  }

  /** Resolves when no admitted call is in flight, and those that were are recorded. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
