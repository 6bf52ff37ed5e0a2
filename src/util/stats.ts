/**
 * The statistics of `skillopt eval` and the paired gate: a 95% confidence interval for a mean
 * score, and a paired test of two skills on the same items. Distributions come from @stdlib; the formulas are named
 * where they are used.
 */
import { createRequire } from 'node:module';
import type ttestFn from '@stdlib/stats-ttest';
import type binomialCdfFn from '@stdlib/stats-base-dists-binomial-cdf';

// Loaded on first use: the two packages are about 700 small modules (a sixth of a second), which
// a run should not pay before its first model call, nor a command that tests nothing.
const require = createRequire(import.meta.url);
const ttest = (): typeof ttestFn => require('@stdlib/stats-ttest') as typeof ttestFn;
const binomialCdf = (x: number, n: number, p: number): number =>
  (require('@stdlib/stats-base-dists-binomial-cdf') as typeof binomialCdfFn)(x, n, p);

/** z for a two-sided 95% interval. */
const Z95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
  /** 'wilson' (0/1 scores), 't' (Student's t over items), 'degenerate' (no variation). */
  method: 'wilson' | 't' | 'degenerate';
}

const isBinary = (values: readonly number[]) => values.every((v) => v === 0 || v === 1);
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** Wilson score interval for k successes in n trials (better than the normal one near 0 and 1, and for small n). */
export function wilson(k: number, n: number, z = Z95): Interval {
  const p = k / n;
  const denom = 1 + (z * z) / n;
  const center = (p + (z * z) / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denom;
  // At k = 0 and k = n the bounds are exactly 0 and 1; computed, they can miss by a rounding error.
  return { low: k === 0 ? 0 : clamp01(center - half), high: k === n ? 1 : clamp01(center + half), method: 'wilson' };
}

/**
 * 95% interval for the mean of per-item scores in [0, 1]: Wilson when every score is 0 or 1,
 * else Student's t interval (mean ± t(0.975, n−1)·s/√n, clamped to [0, 1]). Undefined for
 * fewer than two items.
 */
export function meanInterval(values: readonly number[]): Interval | undefined {
  if (values.length < 2) return undefined;
  if (isBinary(values)) return wilson(values.filter((v) => v === 1).length, values.length);
  const m = mean(values);
  if (values.every((v) => v === values[0])) return { low: m, high: m, method: 'degenerate' };
  const r = ttest()([...values], { alpha: 0.05 });
  return { low: clamp01(r.ci[0]!), high: clamp01(r.ci[1]!), method: 't' };
}

export interface PairedTest {
  n: number;
  /** Mean of candidate − baseline. */
  diff: number;
  /** 95% interval of the mean difference (paired t); undefined for fewer than two pairs. */
  ci?: [number, number];
  /** The p-value (two-sided unless asked otherwise); null when it cannot be computed (no variation in the differences). */
  p: number | null;
  method: 'mcnemar_exact' | 'paired_t' | 'none';
  /** For McNemar: items only the baseline passed, and only the candidate passed. */
  discordant?: { baseline_only: number; candidate_only: number };
}

/**
 * One-sided p-value of McNemar's exact test that the candidate is better: the chance of at least
 * `candidateOnly` wins among the discordant pairs when either side wins each with p = 0.5.
 */
export function mcnemarGreater(baselineOnly: number, candidateOnly: number): number {
  const n = baselineOnly + candidateOnly;
  if (n === 0 || candidateOnly === 0) return 1;
  return Math.min(1, 1 - binomialCdf(candidateOnly - 1, n, 0.5));
}

/**
 * Paired comparison of a candidate with a baseline on the same items. With 0/1 scores on both
 * sides: McNemar's exact test (binomial test on the discordant pairs, p = 0.5); otherwise the
 * paired t-test on the differences. `alternative: 'greater'` tests that the candidate is better
 * (one-sided), as the training gate asks; the default is two-sided.
 */
export function pairedTest(
  baseline: readonly number[],
  candidate: readonly number[],
  options: { alternative?: 'two-sided' | 'greater' } = {},
): PairedTest {
  const greater = options.alternative === 'greater';
  if (baseline.length !== candidate.length) throw new Error('paired test: the two lists must have the same length');
  const n = baseline.length;
  if (n === 0) return { n, diff: 0, p: null, method: 'none' };
  const diffs = candidate.map((c, i) => c - baseline[i]!);
  const diff = mean(diffs);
  const constant = diffs.every((d) => d === diffs[0]);
  const ci: [number, number] | undefined =
    n < 2
      ? undefined
      : constant
        ? [diff, diff]
        : (ttest()([...candidate], [...baseline], { alpha: 0.05 }).ci as [number, number]);
  if (isBinary(baseline) && isBinary(candidate)) {
    const b = baseline.filter((v, i) => v === 1 && candidate[i] === 0).length;
    const c = baseline.filter((v, i) => v === 0 && candidate[i] === 1).length;
    const p = greater
      ? mcnemarGreater(b, c)
      : b + c === 0
        ? 1
        : Math.min(1, 2 * binomialCdf(Math.min(b, c), b + c, 0.5));
    return {
      n,
      diff,
      ...(ci ? { ci } : {}),
      p,
      method: 'mcnemar_exact',
      discordant: { baseline_only: b, candidate_only: c },
    };
  }
  if (n < 2 || constant)
    return { n, diff, ...(ci ? { ci } : {}), p: n >= 2 && diff === 0 ? 1 : null, method: 'paired_t' };
  return {
    n,
    diff,
    ci,
    p: ttest()([...candidate], [...baseline], { alpha: 0.05, ...(greater ? { alternative: 'greater' as const } : {}) })
      .pValue,
    method: 'paired_t',
  };
}
