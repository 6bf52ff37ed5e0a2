/**
 * The Pareto front of a pool of candidates over the selection items. Each item counts for the
 * candidates that reach the best score on it (items nobody solves count for none); a candidate's
 * weight is the number of items it is best on, and the front is the candidates with a weight.
 * A candidate that wins no item can still be the best on average, and one with a low mean can be
 * the only one to solve some items: keeping those is what a pool is for.
 */

/** Per-item scores of a candidate; undefined where it was not scored. */
export type ItemScores = readonly (number | undefined)[];

/** For each candidate, the number of items on which it reaches the best score any candidate reaches (when above 0). */
export function frontWeights(candidates: readonly ItemScores[]): number[] {
  const weights = candidates.map(() => 0);
  const items = Math.max(0, ...candidates.map((c) => c.length));
  for (let i = 0; i < items; i++) {
    let best = 0;
    for (const c of candidates) best = Math.max(best, c[i] ?? 0);
    if (best <= 0) continue;
    candidates.forEach((c, k) => {
      if ((c[i] ?? 0) >= best) weights[k]!++;
    });
  }
  return weights;
}

/** `a` is dominated by `b`: no better on any item, worse on one. */
export function dominated(a: ItemScores, b: ItemScores): boolean {
  let worse = false;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x > y) return false;
    if (x < y) worse = true;
  }
  return worse;
}

/**
 * The candidate to drop when the pool is over its size, among those not kept: a dominated one
 * first, then the one best on the fewest items, then the lowest mean, then the oldest.
 * `order[k]` is candidate k's age rank (lower: older). Undefined when every candidate is kept.
 */
export function toDrop(
  candidates: readonly { values: ItemScores; score: number; order: number; keep: boolean }[],
): number | undefined {
  const weights = frontWeights(candidates.map((c) => c.values));
  const isDominated = candidates.map((c, k) => candidates.some((o, j) => j !== k && dominated(c.values, o.values)));
  let drop: number | undefined;
  const worse = (k: number, j: number) => {
    const a = candidates[k]!;
    const b = candidates[j]!;
    if (isDominated[k] !== isDominated[j]) return isDominated[k]!;
    if (weights[k] !== weights[j]) return weights[k]! < weights[j]!;
    if (a.score !== b.score) return a.score < b.score;
    return a.order < b.order;
  };
  candidates.forEach((c, k) => {
    if (c.keep) return;
    if (drop === undefined || worse(k, drop)) drop = k;
  });
  return drop;
}

/**
 * A parent drawn from the front, with a chance proportional to its weight (`u` uniform in
 * [0, 1)); when no candidate wins an item, the one with the highest mean (the first among equals).
 */
export function pickFromFront(candidates: readonly { values: ItemScores; score: number }[], u: number): number {
  const weights = frontWeights(candidates.map((c) => c.values));
  const total = weights.reduce((a, b) => a + b, 0);
  if (total === 0) return candidates.reduce((best, c, k) => (c.score > candidates[best]!.score ? k : best), 0);
  let x = u * total;
  for (let k = 0; k < weights.length; k++) {
    x -= weights[k]!;
    if (x < 0) return k;
  }
  return weights.length - 1;
}
