/**
 * The paired gate (`evaluation.gate: paired`): the candidate and the skill it came from are
 * scored on the same selection items (each the mean of `gate_repeats` samples), and the
 * candidate is accepted when a one-sided paired test finds it better at `gate_alpha`, by at
 * least `gate_min_delta` per item: McNemar's exact test on the discordant items for 0/1 scores,
 * the paired t-test otherwise (the statistics of `skillopt eval`). A strict "beats on one pass"
 * gate takes noise for progress on a stochastic target; this one asks for evidence.
 *
 * As a selection-evaluation policy it stops as soon as the decision can no longer change: when
 * even a perfect score on every remaining item could not make the test pass, the candidate is
 * rejected there (an accepted candidate is always scored in full).
 */
import { mcnemarGreater, pairedTest, type PairedTest } from '../../util/stats.ts';
import type { LengthRule } from './gate.ts';
import { hardestFirst, type EvaluationPolicy } from './selection-eval.ts';

export interface PairedRule {
  alpha: number;
  minDelta: number;
  /** Selection samples per item and skill. */
  repeats: number;
  /** Whether item scores are 0/1 (the hard metric, one sample): McNemar's test applies. */
  binary: boolean;
}

/** The paired gate's test, as the step record and the dashboard show it. */
export interface GateTest {
  kind: 'paired';
  method: PairedTest['method'];
  /** Items scored for both skills. */
  n: number;
  /** Mean candidate − current over those items, on the gate metric. */
  effect: number;
  /** One-sided p-value that the candidate is better. */
  p: number;
  alpha: number;
  min_delta: number;
  repeats: number;
  discordant?: { current_only: number; candidate_only: number };
  /** The test found the candidate better (before any length preference). */
  passed: boolean;
  /** The evaluation stopped once the test could no longer pass. */
  stopped_early: boolean;
}

const isBinary = (v: number) => v === 0 || v === 1;

/** Pairs of (reference, candidate) values on the items both scored. */
function pairs(
  reference: readonly (number | undefined)[],
  candidate: readonly (number | undefined)[],
): [number, number][] {
  return reference.flatMap((r, i) => {
    const c = candidate[i];
    return r === undefined || c === undefined ? [] : [[r, c] as [number, number]];
  });
}

/**
 * The test on complete scores. A p-value the test cannot give (every item's difference the
 * same) is 0 for a constant gain and 1 otherwise.
 */
export function pairedGateTest(
  reference: readonly (number | undefined)[],
  candidate: readonly (number | undefined)[],
  rule: PairedRule,
  stoppedEarly = false,
): GateTest {
  const both = pairs(reference, candidate);
  const t = pairedTest(
    both.map(([r]) => r),
    both.map(([, c]) => c),
    { alternative: 'greater' },
  );
  const p = t.p ?? (t.n > 0 && t.diff > 0 ? 0 : 1);
  return {
    kind: 'paired',
    method: t.method,
    n: t.n,
    effect: t.diff,
    p,
    alpha: rule.alpha,
    min_delta: rule.minDelta,
    repeats: rule.repeats,
    ...(t.discordant
      ? { discordant: { current_only: t.discordant.baseline_only, candidate_only: t.discordant.candidate_only } }
      : {}),
    passed: !stoppedEarly && passes(p, t.diff, rule),
    stopped_early: stoppedEarly,
  };
}

const passes = (p: number, effect: number, rule: PairedRule) =>
  p <= rule.alpha && effect > 0 && effect >= rule.minDelta;

/**
 * Whether the gate takes the candidate: the test passed, with the length preference when it is
 * on (within the tolerance the shorter skill wins; a shorter candidate no worse than the
 * tolerance is taken without a test, a longer one must also gain more than the tolerance).
 */
export function pairedAccepts(test: Pick<GateTest, 'passed' | 'effect'>, length?: LengthRule): boolean {
  if (!length || length.candidate === length.other) return test.passed;
  if (length.candidate < length.other) return test.passed || test.effect >= -length.within;
  return test.passed && test.effect > length.within;
}

/** The most the mean of `known` can reach by adding any of `extra` (the best case of a mean when items may drop out). */
function maxMean(known: number[], extra: number[]): number {
  let sum = known.reduce((a, b) => a + b, 0);
  let n = known.length;
  for (const x of [...extra].sort((a, b) => b - a)) {
    if (n > 0 && x <= sum / n) break;
    sum += x;
    n++;
  }
  return n === 0 ? 0 : sum / n;
}

/** The selection-evaluation policy of the paired gate: the reference's failures first; stops once the candidate cannot pass. */
export class PairedGate implements EvaluationPolicy {
  private sequence: number[] = [];

  constructor(
    /** The reference skill's value on each item (undefined: not scored). */
    private readonly reference: readonly (number | undefined)[],
    private readonly rule: PairedRule,
    private readonly length?: LengthRule,
  ) {}

  order(count: number): number[] {
    this.sequence = hardestFirst(count, (i) => this.reference[i]);
    return this.sequence;
  }

  decided(
    _sum: number,
    _scored: number,
    _remaining: number,
    _bonus: number,
    known: readonly (number | undefined)[],
  ): boolean {
    const diffs: number[] = [];
    let b = 0;
    let c = 0;
    let binary = this.rule.binary;
    known.forEach((value, k) => {
      const r = this.reference[this.sequence[k]!];
      if (r === undefined || value === undefined) return;
      diffs.push(value - r);
      binary &&= isBinary(r) && isBinary(value);
      if (r > value) b++;
      else if (value > r) c++;
    });
    // The best case of each remaining item: the candidate scores 1 on it.
    const rest = this.sequence.slice(known.length).flatMap((i) => {
      const r = this.reference[i];
      return r === undefined ? [] : [1 - r];
    });
    binary &&= rest.every(isBinary);
    const bestEffect = maxMean(diffs, rest);
    const shorter = this.length && this.length.candidate < this.length.other;
    const longer = this.length && this.length.candidate > this.length.other;
    if (shorter && bestEffect >= -this.length!.within) return false;
    if (longer && bestEffect <= this.length!.within) return true;
    if (bestEffect <= 0 || bestEffect < this.rule.minDelta) return true;
    if (!binary) return false;
    // McNemar: every remaining item the reference failed becomes a win; the p-value can only fall by it.
    return mcnemarGreater(b, c + rest.filter((d) => d === 1).length) > this.rule.alpha;
  }
}
