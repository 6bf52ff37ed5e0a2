/** What a task costs under a skill and what a run's gain cost, as `summary.json` and `eval_summary.json` keep them. */
import { z } from 'zod';

/** What one task costs under a skill (`engine/task-cost.ts`): means over the scored rollouts. */
export const TaskCostSchema = z
  .object({
    /** Rollouts counted (those scored). */
    tasks: z.number(),
    /** Mean tokens per task. */
    input: z.number(),
    cached: z.number(),
    output: z.number(),
    reasoning: z.number(),
    /** Mean USD per task at the target's prices; null when a price is unknown. */
    usd: z.number().nullable(),
    /** Agent targets: mean model turns and tool calls per task. */
    turns: z.number().optional(),
    tool_calls: z.number().optional(),
    /** Latency of the target's calls that reached the provider, ms. */
    call_latency_p50_ms: z.number().optional(),
    call_latency_p95_ms: z.number().optional(),
  })
  .loose();
export type TaskCost = z.infer<typeof TaskCostSchema>;

/** What a run's gain cost (`engine/gain-cost.ts`). */
export const GainCostSchema = z
  .object({
    /** The run's cost (null: some price unknown) and wall time. */
    usd: z.number().nullable(),
    wall_time_s: z.number(),
    /** Test points gained (hard score × 100), best against initial. */
    gain_points: z.number().nullable(),
    /** Training dollars per point gained, when it gained. */
    usd_per_point: z.number().optional(),
    /** Dollars a task the best skill saves against the initial one (negative: it costs more). */
    saving_per_task_usd: z.number().optional(),
    /** Tasks after which the saving has paid for the training, when it saves. */
    payback_tasks: z.number().optional(),
  })
  .loose();
export type GainCost = z.infer<typeof GainCostSchema>;
