/**
 * The validation gate. A candidate replaces the current skill only if its selection score is
 * strictly higher (a tie is a reject: no lateral moves); it becomes the best if it is also
 * strictly above the best. With the gate off, every candidate is accepted.
 *
 * Every place a candidate can be taken in (a step, the slow update, the final skill) decides
 * with `decide` and applies the decision with `applyDecision`; they differ only in their rule.
 */
import type { GateAction } from '../../run/records.ts';
import type { SkillPackage } from '../../skill/package/package.ts';

/** A skill in the trainer's state (its text, and a package's files), with its selection score and where it came from. */
export interface SkillState extends SkillPackage {
  score: number;
  origin: string;
}

/** The package as a skill of the trainer's state. */
export function scoredSkill(pkg: SkillPackage, score: number, origin: string): SkillState {
  return pkg.files?.size ? { skill: pkg.skill, files: pkg.files, score, origin } : { skill: pkg.skill, score, origin };
}

export interface SkillStates {
  current: SkillState;
  best: SkillState & { step: number };
}

/**
 * - `gate`: the candidate must beat the current skill (the step gate; the slow update when
 *   `slow_update_gate_with_selection` is on).
 * - `force`: the candidate is taken at its measured score (the gate off; the slow update's force
 *   mode).
 * - `promote`: the candidate is the current skill itself, measured again after the last epoch:
 *   it can only become the best. The current skill keeps the score it was taken in with, so
 *   that the run's state says what the training saw.
 * Under each rule the candidate becomes the best only when it is strictly above the best.
 */
export type GateRule = 'gate' | 'force' | 'promote';

export interface GateDecision {
  action: GateAction;
  /** The candidate replaces the current skill. */
  replacesCurrent: boolean;
  /** The candidate becomes the best skill. */
  newBest: boolean;
}

/**
 * The length preference (`evaluation.prefer_shorter_within`): when two skills' scores are
 * within `within`, the shorter (in tokens) wins. `candidate` and `other` are their lengths.
 */
export interface LengthRule {
  within: number;
  candidate: number;
  other: number;
}

/**
 * Whether a score beats another: strictly higher, or, with the length preference, the shorter
 * skill within the tolerance (a shorter candidate may be up to `within` lower; a longer one must
 * be more than `within` higher).
 */
export function beats(score: number, other: number, length?: LengthRule): boolean {
  if (!length || length.candidate === length.other) return score > other;
  return length.candidate < length.other ? score >= other - length.within : score > other + length.within;
}

/** The bar an early-stopping evaluation needs the candidate to pass, and whether reaching it exactly loses. */
export function gateBar(current: number, length?: LengthRule): { bar: number; tieLoses: boolean } {
  if (!length || length.candidate === length.other) return { bar: current, tieLoses: true };
  return length.candidate < length.other
    ? { bar: current - length.within, tieLoses: false }
    : { bar: current + length.within, tieLoses: true };
}

export interface DecideOptions {
  /** The length preference against the current and the best skill (token counts). */
  length?: { within: number; candidate: number; current: number; best: number };
  /** The paired gate's verdict, which replaces the comparison with the current skill. */
  passed?: boolean;
}

/**
 * `score` is undefined when the evaluation stopped early: a reject was then certain.
 * `against` is the current and the best skill's scores.
 */
export function decide(
  score: number | undefined,
  against: { current: number; best: number },
  rule: GateRule,
  options: DecideOptions = {},
): GateDecision {
  const reject: GateDecision = { action: 'reject', replacesCurrent: false, newBest: false };
  if (score === undefined) return reject;
  const { length } = options;
  const vs = (other: number): LengthRule | undefined =>
    length && { within: length.within, candidate: length.candidate, other };
  const newBest = beats(score, against.best, vs(length?.best ?? 0));
  if (rule === 'force') return { action: 'force_accept', replacesCurrent: true, newBest };
  if (rule === 'promote')
    return newBest ? { action: 'accept_new_best', replacesCurrent: false, newBest: true } : reject;
  if (!(options.passed ?? beats(score, against.current, vs(length?.current ?? 0)))) return reject;
  return newBest
    ? { action: 'accept_new_best', replacesCurrent: true, newBest: true }
    : { action: 'accept', replacesCurrent: true, newBest: false };
}

/**
 * Takes `decision` on `candidate` (scored `candidate.score`) at `step` into `states`: the one
 * place where the current and the best skill change, whatever decided (a step's gate, a pool
 * merge, the slow update, the final validation).
 */
export function applyDecision(states: SkillStates, candidate: SkillState, decision: GateDecision, step: number): void {
  if (decision.replacesCurrent) states.current = candidate;
  if (decision.newBest) states.best = { ...candidate, step };
}

/**
 * Whether a reject is already certain: `sum` of the item metrics of `scored` items, `remaining`
 * items not yet known, `bonus` a constant added to the mean (semantic density). Items that end
 * in infrastructure errors drop out of the mean, which cannot raise the best case above a
 * perfect remainder, so the bound holds. `tieLoses`: a candidate that can at most reach the bar
 * is rejected (the strict gate); false: only one that cannot reach it.
 */
export function rejectIsCertain(
  sum: number,
  scored: number,
  remaining: number,
  bar: number,
  bonus = 0,
  tieLoses = true,
): boolean {
  const total = scored + remaining;
  if (total === 0) return false;
  const best = (sum + remaining) / total + bonus;
  return tieLoses ? best <= bar : best < bar;
}
