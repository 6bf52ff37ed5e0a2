/**
 * Limits on what a run may spend. They are checked before every call is sent (the calls in flight
 * count against `max_calls`), at the start of every stage and at step boundaries; once one is
 * reached no further call is sent, the calls in flight finish, and the run stops resumably.
 */
import type { Config } from '../config/schema.ts';
import type { Totals } from '../model/ledger.ts';
import { RunStop, type Role } from '../model/types.ts';

/** The reason to stop, or undefined while within every limit. */
export function budgetExceeded(budget: Config['budget'], totals: Totals, elapsedMinutes: number, inFlight = 0): string | undefined {
  if (budget.max_calls > 0 && totals.calls + inFlight >= budget.max_calls) return `${totals.calls} model calls made${inFlight ? ` and ${inFlight} in flight` : ''}, limit budget.max_calls=${budget.max_calls}`;
  const tokens = totals.inputTokens + totals.outputTokens;
  if (budget.max_tokens > 0 && tokens >= budget.max_tokens) return `${tokens} tokens used, limit budget.max_tokens=${budget.max_tokens}`;
  if (budget.max_usd > 0 && totals.costUsd >= budget.max_usd) {
    return `$${totals.costUsd.toFixed(4)} spent${totals.unpricedCalls ? ` (plus ${totals.unpricedCalls} calls of unknown price)` : ''}, limit budget.max_usd=${budget.max_usd}`;
  }
  if (budget.max_minutes > 0 && elapsedMinutes >= budget.max_minutes) return `${elapsedMinutes.toFixed(1)} minutes elapsed, limit budget.max_minutes=${budget.max_minutes}`;
  return undefined;
}

/** The stop of a run whose budget is reached, or undefined. */
export function budgetStop(budget: Config['budget'], totals: Totals, elapsedMinutes: number, inFlight = 0): RunStop | undefined {
  const reason = budgetExceeded(budget, totals, elapsedMinutes, inFlight);
  return reason ? new RunStop(`budget reached: ${reason}. The run is saved; raise the limit and run the same command again to continue.`, 'budget') : undefined;
}

/**
 * A USD cap counts only calls whose price is known: with a role of unknown price it would not
 * hold. Such a run is refused (`error`), or with `budget.allow_unpriced` started with a `warning`.
 */
export function unpricedBudget(budget: Config['budget'], unpriced: [Role, string][]): { error?: string; warning?: string } {
  if (budget.max_usd <= 0 || unpriced.length === 0) return {};
  const roles = unpriced.map(([role, model]) => `model.${role} (${model})`).join(' and ');
  const how = unpriced.map(([role]) => `model.${role}.price: {input: 0.5, output: 1.5}`).join(', ');
  const setIt = `set the price in USD per 1M tokens, e.g. ${how} (0 for a free server of your own)`;
  if (budget.allow_unpriced) {
    return { warning: `budget.max_usd=${budget.max_usd} counts only calls of known price: the price of ${roles} is unknown, so its calls are not counted (budget.allow_unpriced: true); to count them, ${setIt}` };
  }
  return {
    error: `budget.max_usd=${budget.max_usd} is set, but the price of ${roles} is unknown, so its calls would not count against the cap. To count them, ${setIt}; or set budget.allow_unpriced: true to cap only the calls of known price`,
  };
}
