/**
 * What one task costs under a skill: the tokens of its rollout (input, the cached part of it,
 * output, reasoning), their price at the target's rates, and for agent targets the turns and
 * tool calls a task took, as means over the scored rollouts. Read from the rollouts themselves,
 * so a rollout answered by the response cache counts what it cost when it was made: this is
 * what the skill costs each time it runs, not what this evaluation paid.
 */
import type { Price } from '../config/schema.ts';
import type { Trajectory } from '../envs/types.ts';
import { costOf } from '../model/prices.ts';
import type { TaskCost } from '../run/records.ts';
import { round } from '../util/round.ts';

export type { TaskCost };

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** The value at quantile `q` of `xs` (nearest rank). */
export function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** The mean cost of a task among `trajectories` at `price` (undefined: unknown), with the latencies of its calls. */
export function taskCost(
  trajectories: readonly (Trajectory | undefined)[],
  price: Price | undefined,
  latenciesMs: readonly number[] = [],
): TaskCost | undefined {
  const scored = trajectories.filter((t): t is Trajectory => Boolean(t && !t.error && t.usage));
  if (scored.length === 0) return undefined;
  const usages = scored.map((t) => t.usage!);
  const costs = usages.map((u) => costOf(u, price));
  const traces = scored.map((t) => t.traces ?? []);
  const agent = traces.some((ts) => ts.length > 0);
  return {
    tasks: scored.length,
    input: round(mean(usages.map((u) => u.input)), 1),
    cached: round(mean(usages.map((u) => u.cached)), 1),
    output: round(mean(usages.map((u) => u.output)), 1),
    reasoning: round(mean(usages.map((u) => u.reasoning)), 1),
    usd: costs.some((c) => c === null) ? null : round(mean(costs as number[]), 8),
    ...(agent
      ? {
          turns: round(mean(traces.map((ts) => ts.reduce((n, t) => n + (t.turns ?? 0), 0))), 2),
          tool_calls: round(mean(traces.map((ts) => ts.reduce((n, t) => n + t.steps.length, 0))), 2),
        }
      : {}),
    ...(latenciesMs.length
      ? {
          call_latency_p50_ms: Math.round(quantile([...latenciesMs], 0.5)),
          call_latency_p95_ms: Math.round(quantile([...latenciesMs], 0.95)),
        }
      : {}),
  };
}

/** "1,840 tokens in (62% cached), 95 out, $0.0031 a task" */
export function taskCostLine(c: TaskCost): string {
  const cached = c.input > 0 && c.cached > 0 ? ` (${Math.round((c.cached / c.input) * 100)}% cached)` : '';
  const usd = c.usd === null ? 'price unknown' : `$${c.usd.toFixed(4)} a task`;
  const agent = c.turns !== undefined ? `, ${c.turns} turns and ${c.tool_calls} tool calls` : '';
  const latency =
    c.call_latency_p50_ms !== undefined
      ? `, calls p50 ${c.call_latency_p50_ms} ms / p95 ${c.call_latency_p95_ms} ms`
      : '';
  return `${Math.round(c.input).toLocaleString('en')} tokens in${cached}, ${Math.round(c.output).toLocaleString('en')} out, ${usd}${agent}${latency}`;
}
