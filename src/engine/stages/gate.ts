/**
 * The validation gate. A candidate replaces the current skill only if its selection score is
 * strictly higher (a tie is a reject: no lateral moves); it becomes the best if it is also
 * strictly above the best. With the gate off, every candidate is accepted.
 *
 * Evaluation stops as soon as a reject is certain: with the items scored so far and the rest
 * bounded by [0, 1], even a perfect remainder could not beat the current score. This gives the
 * decision a full evaluation would give. An accepted candidate is always evaluated in full,
 * since its score becomes the bar for the next candidate.
 */
export type GateAction = 'accept_new_best' | 'accept' | 'reject' | 'force_accept';

export interface GateState {
  currentScore: number;
  bestScore: number;
  bestStep: number;
}

export interface GateDecision extends GateState {
  action: GateAction;
}

export function decide(candidateScore: number, state: GateState, step: number, useGate = true): GateDecision {
  if (!useGate) {
    const newBest = candidateScore > state.bestScore;
    return {
      action: 'force_accept',
      currentScore: candidateScore,
      bestScore: newBest ? candidateScore : state.bestScore,
      bestStep: newBest ? step : state.bestStep,
    };
  }
  if (candidateScore > state.currentScore) {
    if (candidateScore > state.bestScore) return { action: 'accept_new_best', currentScore: candidateScore, bestScore: candidateScore, bestStep: step };
    return { action: 'accept', currentScore: candidateScore, bestScore: state.bestScore, bestStep: state.bestStep };
  }
  return { action: 'reject', ...state };
}

/**
 * Whether a reject is already certain: `sum` of the item metrics of `scored` items, `remaining`
 * items not yet known, `bonus` a constant added to the mean (semantic density). Items that end
 * in infrastructure errors drop out of the mean, which cannot raise the best case above a
 * perfect remainder, so the bound holds.
 */
export function rejectIsCertain(sum: number, scored: number, remaining: number, bar: number, bonus = 0): boolean {
  const total = scored + remaining;
  if (total === 0) return false;
  const best = (sum + remaining) / total + bonus;
  return best <= bar;
}
