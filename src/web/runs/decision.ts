/**
 * What a step (or a slow update, or a pool member) decided, said once for the page: whether
 * the candidate was accepted, rejected or the step skipped, and the recorded action as its kind.
 * The page reads `outcome` and never matches action spellings itself.
 */
import { isAccepted, isSkipped } from '../../run/records.ts';

export type Outcome = 'accepted' | 'rejected' | 'skipped' | 'other';

export interface Decision {
  outcome: Outcome;
  /** The action as recorded (`accept_new_best`, `reject`, `skip_no_patches`, …). */
  kind: string;
  /** The accepted candidate became the best skill so far. */
  newBest: boolean;
  /** Accepted without passing the gate (a slow update applied regardless, a forced step). */
  forced: boolean;
}

export function decisionOf(action: string): Decision {
  const outcome: Outcome = isAccepted(action)
    ? 'accepted'
    : action === 'reject'
      ? 'rejected'
      : isSkipped(action) || action.startsWith('skip')
        ? 'skipped'
        : 'other';
  return { outcome, kind: action, newBest: action === 'accept_new_best', forced: action === 'force_accept' };
}
