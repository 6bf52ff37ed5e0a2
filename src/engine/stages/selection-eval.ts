/**
 * Scoring a skill on the selection split, for the gate. Each item's result comes from the score
 * cache when this skill was already run on it. How far the evaluation goes is a policy passed
 * to it: `FULL_EVALUATION` runs every item; `EarlyStop` runs the items hardest first (those the
 * current skill failed) and stops as soon as the candidate cannot beat the bar, which gives the
 * decision a full evaluation would give; `PairedGate` (paired-gate.ts) stops once a paired test
 * can no longer find the candidate better. With `repeats` > 1 every item is sampled that many
 * times per skill and its score is the mean of its samples (a stochastic target).
 *
 * An early accept (`ScoreOptions.accept`): once the items scored so far make an accept certain,
 * the evaluation says so at once with the bounds of the final score, starts no more items until
 * its caller lets it go on, then scores the rest, so that its result is a full evaluation's.
 */
import type { Item, Trajectory } from '../../envs/types.ts';
import type { EventLog } from '../../run/events.ts';
import { skillId, skillText, type Skill } from '../../skill/package/package.ts';
import { computeScore, gateBonus, gateScore, itemMetric, type GateScoring } from '../scoring/means.ts';
import { rejectIsCertain } from './gate.ts';
import { writeRolloutDir, type Rollouts } from './rollout.ts';

/** How far a selection evaluation goes. */
export interface EvaluationPolicy {
  /**
   * The order the items are run in (indices). `cachedMetric(skill, i)` is a skill's score on
   * item i on the gate's metric, when the score cache knows it.
   */
  order(count: number, cachedMetric: (skill: Skill, i: number) => number | undefined): number[];
  /**
   * Whether the decision is already certain: `sum` of the metrics of the `scored` items taken in
   * order, `remaining` items not yet known, `bonus` added to the mean; `known` is the metric of
   * each item taken so far, in order (undefined: an item that only ended in errors).
   */
  decided(
    sum: number,
    scored: number,
    remaining: number,
    bonus: number,
    known: readonly (number | undefined)[],
  ): boolean;
}

const inOrder = (count: number) => Array.from({ length: count }, (_, i) => i);

/** Every item, in split order. */
export const FULL_EVALUATION: EvaluationPolicy = { order: inOrder, decided: () => false };

/** Items the current skill failed first (unknown ones last), in split order among equals. */
export function hardestFirst(count: number, value: (i: number) => number | undefined): number[] {
  const v = (i: number) => value(i) ?? 1;
  return inOrder(count).sort((a, b) => v(a) - v(b) || a - b);
}

/** Stops once the candidate cannot beat `bar` (the current skill's score), trying the current skill's failures first. */
export class EarlyStop implements EvaluationPolicy {
  constructor(
    private readonly bar: number,
    /** The current skill, whose cached results set the order. */
    private readonly currentSkill: Skill,
    /** Whether a candidate that can at most reach the bar is rejected (ties lose); false: only below it. */
    private readonly tieLoses = true,
  ) {}

  order(count: number, cachedMetric: (skill: Skill, i: number) => number | undefined): number[] {
    return hardestFirst(count, (i) => cachedMetric(this.currentSkill, i));
  }

  decided(sum: number, scored: number, remaining: number, bonus: number): boolean {
    return rejectIsCertain(sum, scored, remaining, this.bar, bonus, this.tieLoses);
  }
}

export interface SelectionScore {
  /** Every sample's trajectory: item i's sample r at `r * items + i` (undefined: never run). */
  trajectories: (Trajectory | undefined)[];
  /** Means over the scored items (null when stopped early). */
  hard: number | null;
  soft: number | null;
  /** The gate score; for an early stop, the best score the candidate could still have reached. */
  gate: number;
  /** Each item's score on the gate metric (the mean of its samples); undefined when not scored. */
  itemValues: (number | undefined)[];
  complete: boolean;
  /** Rollouts run now, and rollouts not needed (cached or skipped). */
  used: number;
  saved: number;
  cacheHits: number;
  errors: number;
}

/** Share of selection items that may end in infrastructure errors before the evaluation is refused. */
export const MAX_ERROR_SHARE = 0.1;

/** One item's samples as one result: the mean of the scored samples; an error when none was scored. */
function combineSamples(samples: (Trajectory | undefined)[]): Trajectory | undefined {
  if (samples.length === 1 || samples.some((t) => t === undefined))
    return samples.length === 1 ? samples[0] : undefined;
  const ok = (samples as Trajectory[]).filter((t) => !t.error);
  if (ok.length === 0) return samples[0];
  return {
    ...ok[0]!,
    hard: ok.reduce((a, t) => a + t.hard, 0) / ok.length,
    soft: ok.reduce((a, t) => a + t.soft, 0) / ok.length,
  };
}

/** The bounds of the final gate score, from the first `items` of the evaluation's order. */
export interface ScoreBounds {
  low: number;
  high: number;
  items: number;
}

/** An early accept: see the file's comment. */
export interface EarlyAccept {
  /** Whether the decision is certain (an accept, and whether the candidate is the new best) within these bounds of the final score. */
  certain(bounds: ScoreBounds): boolean;
  /** Called as soon as it is; the rest of the items start when the promise it returns resolves. */
  decided(bounds: ScoreBounds): Promise<void>;
}

export interface ScoreOptions {
  /** Where the results go. */
  dir?: string;
  /** How far to go (default: every item). */
  policy?: EvaluationPolicy;
  /** Report progress as that step's. */
  step?: number;
  accept?: EarlyAccept;
}

export class SelectionEvaluator {
  constructor(
    private readonly rollouts: Rollouts,
    /** The selection split the gate scores on (first `sel_env_num` of val). */
    readonly items: Item[],
    private readonly scoring: GateScoring,
    private readonly events: EventLog,
    /** Samples of each item per skill (`evaluation.gate_repeats`). */
    readonly repeats = 1,
  ) {}

  /** The skill's rollouts on the selection split that the score cache holds, every sample (undefined: not run); runs nothing. */
  cachedTrajectories(skill: Skill): (Trajectory | undefined)[] {
    const hash = skillId(skill);
    const out: (Trajectory | undefined)[] = [];
    for (let r = 0; r < this.repeats; r++) for (const item of this.items) out.push(this.rollouts.cached(hash, item, r));
    return out;
  }

  /** Sample r of item i, as one entry of the evaluation's rollouts. */
  private entry(i: number, r: number): number {
    return r * this.items.length + i;
  }

  /** The items and samples of the entries, for one rollout job (undefined samples: all 0). */
  private entries(): { items: Item[]; samples?: number[] } {
    if (this.repeats === 1) return { items: this.items };
    const all = Array.from({ length: this.repeats }, (_, r) => r);
    return { items: all.flatMap(() => this.items), samples: all.flatMap((r) => this.items.map(() => r)) };
  }

  /** Runs the entries that ended in infrastructure errors once more (errors are never cached). */
  private async retryErrors(
    skill: Skill,
    trajectories: (Trajectory | undefined)[],
    entries: { items: Item[]; samples?: number[] },
  ): Promise<void> {
    const failed = entries.items.flatMap((item, index) => (trajectories[index]?.error ? [{ item, index }] : []));
    if (failed.length === 0) return;
    const samples = entries.samples && failed.map((f) => entries.samples![f.index]!);
    const again = await this.rollouts.run(
      skill,
      failed.map((f) => f.item),
      samples ? { samples } : {},
    );
    failed.forEach(({ index }, k) => {
      const t = again.trajectories[k];
      if (t && !t.error) trajectories[index] = t;
    });
  }

  /** Item i's result from all its samples (undefined while one is unknown). */
  private itemResult(perSample: (Trajectory | undefined)[], i: number): Trajectory | undefined {
    return combineSamples(Array.from({ length: this.repeats }, (_, r) => perSample[this.entry(i, r)]));
  }

  async score(skill: Skill, options: ScoreOptions = {}): Promise<SelectionScore> {
    const { items, scoring: s, repeats } = this;
    const policy = options.policy ?? FULL_EVALUATION;
    const bonus = gateBonus(skillText(skill), s);
    const hashes = new Map<Skill, string>();
    const metricOf = (t: Trajectory | undefined) =>
      t && !t.error ? itemMetric(t.hard, t.soft, s.metric, s.mixedWeight) : undefined;
    const sequence = policy.order(items.length, (other, i) => {
      const hash = hashes.get(other) ?? skillId(other);
      hashes.set(other, hash);
      const item = items[i];
      return (
        item && metricOf(combineSamples(Array.from({ length: repeats }, (_, r) => this.rollouts.cached(hash, item, r))))
      );
    });
    const entries = this.entries();
    // The stop is decided on the longest run of finished items in `sequence`, never on which items
    // happen to finish first, so that where it stops (and the bound it reports) is reproducible.
    const perSample: (Trajectory | undefined)[] = new Array(entries.items.length).fill(undefined);
    const known: (number | undefined)[] = [];
    let prefix = 0;
    let sum = 0;
    let scored = 0;
    const certain = () => policy.decided(sum, scored, items.length - prefix, bonus, known);
    // The bounds count every item not scored yet (an error retried later included) as 0 or as 1.
    const bounds = (): ScoreBounds => {
      const open = items.length - scored;
      return { low: sum / items.length + bonus, high: (sum + open) / (scored + open) + bonus, items: prefix };
    };
    /** Once an accept is certain: when the rest may start. */
    let accepted: Promise<void> | undefined;
    const onResult = (t: Trajectory, index: number) => {
      perSample[index] = t;
      let next: Trajectory | undefined;
      while (prefix < sequence.length && (next = this.itemResult(perSample, sequence[prefix]!)) && !certain()) {
        prefix++;
        const value = metricOf(next);
        known.push(value);
        if (value === undefined) continue;
        scored++;
        sum += value;
      }
      if (!accepted && options.accept?.certain(bounds())) accepted = options.accept.decided(bounds());
    };
    const flat = sequence.flatMap((i) => Array.from({ length: repeats }, (_, r) => this.entry(i, r)));
    const progress =
      options.step === undefined
        ? undefined
        : (done: number, total: number) =>
            this.events.emit({ type: 'stage_progress', step: options.step!, stage: 'evaluate', done, total });
    const result = await this.rollouts.run(skill, entries.items, {
      order: flat,
      ...(entries.samples ? { samples: entries.samples } : {}),
      onResult,
      stop: () => certain() || accepted !== undefined,
      onProgress: progress,
    });
    if (accepted) {
      const rest = flat.filter((index) => result.trajectories[index] === undefined);
      if (rest.length > 0) {
        await accepted;
        const more = await this.rollouts.run(
          skill,
          rest.map((index) => entries.items[index]!),
          {
            ...(entries.samples ? { samples: rest.map((index) => entries.samples![index]!) } : {}),
            onResult: (t, k) => onResult(t, rest[k]!),
          },
        );
        for (const [k, index] of rest.entries()) result.trajectories[index] = more.trajectories[k];
        result.ran += more.ran;
        result.cached += more.cached;
      }
    }
    const complete = prefix === items.length;
    if (complete) await this.retryErrors(skill, result.trajectories, entries);
    if (options.dir)
      writeRolloutDir(options.dir, result.trajectories, skillId(skill), this.rollouts.targetId, entries.samples ?? 0);
    const finished = result.trajectories.filter((t): t is Trajectory => t !== undefined);
    const sampleScore = computeScore(finished);
    if (sampleScore.errors > MAX_ERROR_SHARE * entries.items.length) {
      const first = finished.find((t) => t.error)!.error!;
      throw new Error(
        `the selection evaluation failed on ${sampleScore.errors} of ${entries.items.length} ${repeats > 1 ? 'samples' : 'items'} (${first.kind}: ${first.message}); ` +
          'a score over the rest would not be trustworthy. Check the target model and its endpoint, then resume the run',
      );
    }
    const perItem = repeats === 1 ? result.trajectories : items.map((_, i) => this.itemResult(result.trajectories, i));
    const itemsDone = perItem.filter((t): t is Trajectory => t !== undefined);
    const score = repeats === 1 ? sampleScore : computeScore(itemsDone);
    const remaining = items.length - prefix;
    const gate = complete
      ? gateScore(itemsDone, skillText(skill), s)
      : (sum + remaining) / (scored + remaining) + bonus;
    return {
      trajectories: result.trajectories,
      hard: complete ? score.hard : null,
      soft: complete ? score.soft : null,
      gate,
      itemValues: perItem.map(metricOf),
      complete,
      used: result.ran,
      saved: entries.items.length - result.ran,
      cacheHits: result.cached,
      errors: sampleScore.errors,
    };
  }
}
