/** Limits on what a run may spend; checked at step boundaries. */
import type { Config } from '../config/schema.ts';
import type { Totals } from '../model/ledger.ts';

/** The reason to stop, or undefined while within every limit. */
export function budgetExceeded(budget: Config['budget'], totals: Totals, elapsedMinutes: number): string | undefined {
  if (budget.max_calls > 0 && totals.calls >= budget.max_calls) return `${totals.calls} model calls made, limit budget.max_calls=${budget.max_calls}`;
  const tokens = totals.inputTokens + totals.outputTokens;
  if (budget.max_tokens > 0 && tokens >= budget.max_tokens) return `${tokens} tokens used, limit budget.max_tokens=${budget.max_tokens}`;
  if (budget.max_usd > 0 && totals.costUsd >= budget.max_usd) {
    return `$${totals.costUsd.toFixed(4)} spent${totals.unpricedCalls ? ` (plus ${totals.unpricedCalls} calls of unknown price)` : ''}, limit budget.max_usd=${budget.max_usd}`;
  }
  if (budget.max_minutes > 0 && elapsedMinutes >= budget.max_minutes) return `${elapsedMinutes.toFixed(1)} minutes elapsed, limit budget.max_minutes=${budget.max_minutes}`;
  return undefined;
}
