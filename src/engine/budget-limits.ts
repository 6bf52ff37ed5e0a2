/**
 * Limits on what a run may spend. They are checked before every call is sent (the calls in flight
 * count against `max_calls`), at the start of every stage and at step boundaries; once one is
 * reached no further call is sent, the calls in flight finish, and the run stops resumably.
 */
import type { Config } from '../config/schema.ts';
import type { Totals } from '../model/ledger.ts';
import { RunStop, type Role } from '../model/types.ts';

export interface BudgetStop {
  /** The limit reached, e.g. `budget.max_calls`. */
  key: `budget.${keyof Config['budget']}`;
  limit: number;
  /** What was used, and the limit. */
  message: string;
}

/** The limit reached (the calls in flight count against `max_calls`), or undefined while within every limit. */
export function budgetExceeded(
  budget: Config['budget'],
  totals: Totals,
  elapsedMinutes: number,
  inFlight = 0,
): BudgetStop | undefined {
  const stop = (key: keyof Config['budget'] & `max_${string}`, message: string): BudgetStop => ({
    key: `budget.${key}`,
    limit: budget[key],
    message: `${message}, limit budget.${key}=${budget[key]}`,
  });
  if (budget.max_calls > 0 && totals.calls + inFlight >= budget.max_calls)
    return stop('max_calls', `${totals.calls} model calls made${inFlight ? ` and ${inFlight} in flight` : ''}`);
  const tokens = totals.inputTokens + totals.outputTokens;
  if (budget.max_tokens > 0 && tokens >= budget.max_tokens) return stop('max_tokens', `${tokens} tokens used`);
  if (budget.max_usd > 0 && totals.costUsd >= budget.max_usd) {
    return stop(
      'max_usd',
      `$${totals.costUsd.toFixed(4)} spent${totals.unpricedCalls ? ` (plus ${totals.unpricedCalls} calls of unknown price)` : ''}`,
    );
  }
  if (budget.max_minutes > 0 && elapsedMinutes >= budget.max_minutes)
    return stop('max_minutes', `${elapsedMinutes.toFixed(1)} minutes elapsed`);
  return undefined;
}

/** The stop of a run whose budget is reached, or undefined. */
export function budgetStop(
  budget: Config['budget'],
  totals: Totals,
  elapsedMinutes: number,
  inFlight = 0,
): RunStop | undefined {
  const reached = budgetExceeded(budget, totals, elapsedMinutes, inFlight);
  return reached
    ? new RunStop(`budget reached: ${reached.message}. The run is saved; raise the limit to continue.`, 'budget', {
        key: reached.key,
        limit: reached.limit,
      })
    : undefined;
}

/**
 * A USD cap counts only calls whose price is known: with a role of unknown price it would not
 * hold. Such a run is refused (`error`), or with `budget.allow_unpriced` started with a `warning`.
 */
export function unpricedBudget(
  budget: Config['budget'],
  unpriced: [Role, string][],
): { error?: string; warning?: string } {
  if (budget.max_usd <= 0 || unpriced.length === 0) return {};
  const roles = unpriced.map(([role, model]) => `model.${role} (${model})`).join(' and ');
  const how = unpriced.map(([role]) => `model.${role}.price: {input: 0.5, output: 1.5}`).join(', ');
  const setIt = `set the price in USD per 1M tokens, e.g. ${how} (0 for a free server of your own)`;
  if (budget.allow_unpriced) {
    return {
      warning: `budget.max_usd=${budget.max_usd} counts only calls of known price: the price of ${roles} is unknown, so its calls are not counted (budget.allow_unpriced: true); to count them, ${setIt}`,
    };
  }
  return {
    error: `budget.max_usd=${budget.max_usd} is set, but the price of ${roles} is unknown, so its calls would not count against the cap. To count them, ${setIt}; or set budget.allow_unpriced: true to cap only the calls of known price`,
  };
}
