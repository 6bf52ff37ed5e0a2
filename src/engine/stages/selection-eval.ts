/**
 * Scoring a skill on the selection split, for the gate. Each item's result comes from the score
 * cache when this skill was already run on it. How far the evaluation goes is a policy passed
 * to it: `FULL_EVALUATION` runs every item; `EarlyStop` runs the items hardest first (those the
 * current skill failed) and stops as soon as the candidate cannot beat the bar, which gives the
 * decision a full evaluation would give. Another policy (a statistical gate) fits beside them.
 */
import type { Item, Trajectory } from '../../envs/types.ts';
import type { EventLog } from '../../run/events.ts';
import { skillHash } from '../../skill/document.ts';
import { computeScore, gateBonus, gateScore, itemMetric, type GateScoring } from '../scoring/metrics.ts';
import { rejectIsCertain } from './gate.ts';
import { writeRolloutDir, type Rollouts } from './rollout.ts';

/** How far a selection evaluation goes. */
export interface EvaluationPolicy {
  /**
   * The order the items are run in (indices). `cachedMetric(skill, i)` is a skill's score on
   * item i on the gate's metric, when the score cache knows it.
   */
  order(count: number, cachedMetric: (skill: string, i: number) => number | undefined): number[];
  /**
   * Whether the decision is already certain: `sum` of the metrics of the `scored` items taken in
   * order, `remaining` items not yet known, `bonus` added to the mean.
   */
  decided(sum: number, scored: number, remaining: number, bonus: number): boolean;
}

const inOrder = (count: number) => Array.from({ length: count }, (_, i) => i);

/** Every item, in split order. */
export const FULL_EVALUATION: EvaluationPolicy = { order: inOrder, decided: () => false };

/** Stops once the candidate cannot beat `bar` (the current skill's score), trying the current skill's failures first. */
export class EarlyStop implements EvaluationPolicy {
  constructor(
    private readonly bar: number,
    /** The current skill, whose cached results set the order. */
    private readonly currentSkill: string,
  ) {}

  order(count: number, cachedMetric: (skill: string, i: number) => number | undefined): number[] {
    const value = (i: number) => cachedMetric(this.currentSkill, i) ?? 1;
    return inOrder(count).sort((a, b) => value(a) - value(b) || a - b);
  }

  decided(sum: number, scored: number, remaining: number, bonus: number): boolean {
    return rejectIsCertain(sum, scored, remaining, this.bar, bonus);
  }
}

export interface SelectionScore {
  trajectories: (Trajectory | undefined)[];
  /** Means over the scored items (null when stopped early). */
  hard: number | null;
  soft: number | null;
  /** The gate score; for an early stop, the best score the candidate could still have reached. */
  gate: number;
  complete: boolean;
  /** Rollouts run now, and rollouts not needed (cached or skipped). */
  used: number;
  saved: number;
  cacheHits: number;
  errors: number;
}

/** Share of selection items that may end in infrastructure errors before the evaluation is refused. */
export const MAX_ERROR_SHARE = 0.1;

export class SelectionEvaluator {
  constructor(
    private readonly rollouts: Rollouts,
    /** The selection split the gate scores on (first `sel_env_num` of val). */
    readonly items: Item[],
    private readonly scoring: GateScoring,
    private readonly events: EventLog,
  ) {}

  /** Runs the items that ended in infrastructure errors once more (errors are never cached). */
  private async retryErrors(skill: string, trajectories: (Trajectory | undefined)[]): Promise<void> {
    const failed = this.items.flatMap((item, index) => (trajectories[index]?.error ? [{ item, index }] : []));
    if (failed.length === 0) return;
    const again = await this.rollouts.run(skill, failed.map((f) => f.item));
    failed.forEach(({ index }, k) => {
      const t = again.trajectories[k];
      if (t && !t.error) trajectories[index] = t;
    });
  }

  /** `policy`: how far to go (default: every item); `dir` gets the results; `step`: report progress as that step's. */
  async score(skill: string, options: { dir?: string; policy?: EvaluationPolicy; step?: number } = {}): Promise<SelectionScore> {
    const { items, scoring: s } = this;
    const policy = options.policy ?? FULL_EVALUATION;
    const bonus = gateBonus(skill, s);
    const hashes = new Map<string, string>();
    const sequence = policy.order(items.length, (other, i) => {
      const hash = hashes.get(other) ?? skillHash(other);
      hashes.set(other, hash);
      const item = items[i];
      const t = item && this.rollouts.cached(hash, item);
      return t && !t.error ? itemMetric(t.hard, t.soft, s.metric, s.mixedWeight) : undefined;
    });
    // The stop is decided on the longest run of finished items in `sequence`, never on which items
    // happen to finish first, so that where it stops (and the bound it reports) is reproducible.
    const known: (Trajectory | undefined)[] = new Array(items.length).fill(undefined);
    let prefix = 0;
    let sum = 0;
    let scored = 0;
    const certain = () => policy.decided(sum, scored, items.length - prefix, bonus);
    const result = await this.rollouts.run(skill, items, {
      order: sequence,
      onResult: (t, index) => {
        known[index] = t;
        while (prefix < sequence.length && known[sequence[prefix]!] && !certain()) {
          const next = known[sequence[prefix]!]!;
          prefix++;
          if (next.error) continue;
          scored++;
          sum += itemMetric(next.hard, next.soft, s.metric, s.mixedWeight);
        }
      },
      stop: certain,
      onProgress: options.step === undefined ? undefined : (done, total) => this.events.emit({ type: 'stage_progress', step: options.step!, stage: 'evaluate', done, total }),
    });
    const complete = prefix === items.length;
    if (complete) await this.retryErrors(skill, result.trajectories);
    if (options.dir) writeRolloutDir(options.dir, result.trajectories, skillHash(skill), this.rollouts.targetId, 0);
    const finished = result.trajectories.filter((t): t is Trajectory => t !== undefined);
    const score = computeScore(finished);
    if (score.errors > MAX_ERROR_SHARE * items.length) {
      const first = finished.find((t) => t.error)!.error!;
      throw new Error(
        `the selection evaluation failed on ${score.errors} of ${items.length} items (${first.kind}: ${first.message}); ` +
          'a score over the rest would not be trustworthy. Check the target model and its endpoint, then resume the run',
      );
    }
    const remaining = items.length - prefix;
    const gate = complete ? gateScore(finished, skill, s) : (sum + remaining) / (scored + remaining) + bonus;
    return {
      trajectories: result.trajectories,
      hard: complete ? score.hard : null,
      soft: complete ? score.soft : null,
      gate,
      complete,
      used: result.ran,
      saved: items.length - result.ran,
      cacheHits: result.cached,
      errors: score.errors,
    };
  }
}
