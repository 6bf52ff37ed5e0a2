/**
 * What a model call is made for, carried by the async context of the work that makes it: a
 * training step (`step 3`), the baseline, an epoch boundary, the final evaluation. The ledger
 * tags each call with it, so that a step's record counts its own calls whenever they ran (work
 * run ahead of a step, a gate still scoring while the next step runs), a resumed step counts
 * those an earlier process made for it, and a replay is told apart from a new call.
 *
 * Queues that run a function later, in whatever context frees them (p-limit), must be given
 * `carried(fn)` so that the function keeps the context it was queued in.
 */
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';

const work = new AsyncLocalStorage<string>();

/** The work of training step `step`. */
export const stepWork = (step: number) => `step ${step}`;

/** Runs `fn` (and all it starts) as `what` (`stepWork(n)`, 'baseline', …). */
export function madeFor<T>(what: string, fn: () => T): T {
  return work.run(what, fn);
}

/** What the current work is for, if anything was said. */
export function currentWork(): string | undefined {
  return work.getStore();
}

/** `fn`, bound to the context it is created in (for a queue that runs it later). */
export function carried<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return AsyncResource.bind(fn);
}
