/**
 * Critical-path floors of one training step, from a step record's counts and the run's
 * latencies and limits: the least wall time the step could take if every call took exactly its
 * latency and nothing else cost time.
 *
 * - `ourFloor`: this engine's stage order. Training rollouts start in reflection's order and the
 *   analysts overlap them (the last analyst needs the last rollout); the merge levels (the staged
 *   or the combined strategy); the ranking call when one was made; the selection rollouts the
 *   gate ran (early stopping and the score cache leave some out), or after an early accept
 *   those it had scored when the accept was certain (the rest run while the next step reflects,
 *   when the target is idle, so they are off the path).
 * - `originalFloor`: the original's stage order, from the same counts: rollouts, then all
 *   analysts, then the failure merge hierarchy, the success hierarchy and the final merge one
 *   after another, the ranking call whenever the merged edits exceed the budget, then the whole
 *   selection split every step.
 */
import { isSkipped, type HistoryRecord } from '../src/run/records.ts';

export interface StepShape {
  /** Latency of a target and of an optimizer call, in seconds. */
  targetS: number;
  optimizerS: number;
  /** Target calls in flight (rollout workers) and optimizer calls in flight (analyst workers). */
  workers: number;
  analysts: number;
  mergeGroup: number;
  /** Training items per step, and selection items the gate scores. */
  batch: number;
  selection: number;
  strategy: 'staged' | 'combined';
}

const waves = (n: number, c: number) => Math.ceil(n / c);

/** Merge levels of a hierarchy over `n` patches in groups of `g`. */
function levels(n: number, g: number): number {
  let depth = 0;
  for (let k = n; k > 1; k = Math.ceil(k / g)) depth++;
  return depth;
}

/** Merge calls in sequence in the combined strategy (as `aggregateCombined` cuts its levels). */
function combinedDepth(failure: number, success: number, g: number): number {
  let f = failure;
  let s = success;
  let depth = 0;
  while (f + s > g) {
    depth++;
    const failureFirst = f >= s;
    const reduceF = f > 1 && (failureFirst || Math.ceil(s / g) + f > g);
    const reduceS = s > 1 && (!failureFirst || Math.ceil(f / g) + s > g);
    if (reduceF) f = Math.ceil(f / g);
    if (reduceS) s = Math.ceil(s / g);
  }
  return depth + (f + s >= 2 ? 1 : 0);
}

/**
 * What a step did, from its record and `analysts`, its analyst calls (its minibatches). Not from
 * the record's token counts: with `evaluation.gate_overlap` a step's analyst and merge calls can
 * be made, and counted, during the step before. Two patches or more are merged.
 */
function counts(r: HistoryRecord, analysts: number) {
  const f = r.n_failure_patches ?? 0;
  const s = r.n_success_patches ?? 0;
  return { analysts, f, s, merged: f + s >= 2 };
}

/** `acceptedAfter`: the selection items scored when an early accept was certain (its `gate_decision` event). */
export function ourFloor(r: HistoryRecord, x: StepShape, analystCalls: number, acceptedAfter?: number): number {
  const { analysts, f, s, merged } = counts(r, analystCalls);
  const rollouts = waves(x.batch, x.workers) * x.targetS;
  const reflect =
    analysts > 0 ? Math.max(rollouts + x.optimizerS, x.targetS + waves(analysts, x.analysts) * x.optimizerS) : rollouts;
  const chain = !merged
    ? 0
    : x.strategy === 'combined'
      ? combinedDepth(f, s, x.mergeGroup)
      : Math.max(levels(f, x.mergeGroup), levels(s, x.mergeGroup)) + (f > 0 && s > 0 ? 1 : 0);
  const ranking = (r.tokens?.ranking?.calls ?? 0) > 0 ? x.optimizerS : 0;
  const gate = Math.min(r.gate?.rollouts_used ?? 0, acceptedAfter ?? Infinity);
  return reflect + chain * x.optimizerS + ranking + waves(gate, x.workers) * x.targetS;
}

export function originalFloor(r: HistoryRecord, x: StepShape, analystCalls: number): number {
  const { analysts, f, s } = counts(r, analystCalls);
  const rollouts = waves(x.batch, x.workers) * x.targetS;
  const reflect = waves(analysts, x.analysts) * x.optimizerS;
  const merges = (levels(f, x.mergeGroup) + levels(s, x.mergeGroup) + (f > 0 && s > 0 ? 1 : 0)) * x.optimizerS;
  const ranking = (r.n_edits_merged ?? 0) > (r.edit_budget ?? Infinity) ? x.optimizerS : 0;
  // A step with no candidate stops before the gate.
  const gate = isSkipped(r.action) ? 0 : waves(x.selection, x.workers) * x.targetS;
  return rollouts + reflect + merges + ranking + gate;
}
