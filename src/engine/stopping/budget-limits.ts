/** Limits on what a run may spend; checked at step boundaries. */
import type { Config } from '../../config/schema.ts';
import type { Totals } from '../../model/ledger.ts';

export interface BudgetStop {
  /** The limit reached, e.g. `budget.max_calls`. */
  key: `budget.${keyof Config['budget']}`;
  limit: number;
  /** What was used, and the limit. */
  message: string;
}

/** The limit reached, or undefined while within every limit. */
export function budgetExceeded(budget: Config['budget'], totals: Totals, elapsedMinutes: number): BudgetStop | undefined {
  const stop = (key: keyof Config['budget'], message: string): BudgetStop => ({ key: `budget.${key}`, limit: budget[key], message: `${message}, limit budget.${key}=${budget[key]}` });
  if (budget.max_calls > 0 && totals.calls >= budget.max_calls) return stop('max_calls', `${totals.calls} model calls made`);
  const tokens = totals.inputTokens + totals.outputTokens;
  if (budget.max_tokens > 0 && tokens >= budget.max_tokens) return stop('max_tokens', `${tokens} tokens used`);
  if (budget.max_usd > 0 && totals.costUsd >= budget.max_usd) {
    return stop('max_usd', `$${totals.costUsd.toFixed(4)} spent${totals.unpricedCalls ? ` (plus ${totals.unpricedCalls} calls of unknown price)` : ''}`);
  }
  if (budget.max_minutes > 0 && elapsedMinutes >= budget.max_minutes) return stop('max_minutes', `${elapsedMinutes.toFixed(1)} minutes elapsed`);
  return undefined;
}
