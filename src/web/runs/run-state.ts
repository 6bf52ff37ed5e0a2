/**
 * What the event log and the call ledger say about a run, folded as their lines arrive (they
 * are append-only and can grow large, so no line is kept once it has been counted).
 */
import os from 'node:os';
import { z } from 'zod';
import { EventSchema, type RunEvent } from '../../run/events.ts';

export interface LiveStage {
  step: number;
  epoch: number;
  stage: string;
  detail?: string;
  done?: number;
  total?: number;
  since: string;
}

export interface EpochEvent {
  epoch: number;
  kind: 'slow_update' | 'meta_skill';
  action: string;
  detail?: string;
}

/** The reduced event log. */
export class EventFold {
  started?: Extract<RunEvent, { type: 'run_started' }>;
  /** The last terminal event: finished, stopped or failed. */
  ended?: Extract<RunEvent, { type: 'run_finished' | 'run_stopped' | 'run_failed' }>;
  stage?: LiveStage;
  lastStepFinished = 0;
  /** Wall-clock seconds per step and per stage (kept out of history.json, which is reproducible). */
  stepTimes = new Map<number, { seconds: number; timing?: Record<string, number> }>();
  /** The gate's decision per step, with the scores it compared (before the step changed them). */
  gates = new Map<number, Extract<RunEvent, { type: 'gate_decision' }>>();
  epochEvents: EpochEvent[] = [];
  /** Recent log lines (warnings and information), newest last. */
  logs: { time: string; level: string; message: string }[] = [];
  firstTime?: string;
  lastTime?: string;
  count = 0;

  add(e: RunEvent): void {
    this.count++;
    this.firstTime ??= e.time;
    this.lastTime = e.time;
    switch (e.type) {
      case 'run_started':
        this.started = e;
        this.ended = undefined;
        break;
      case 'stage_started':
        this.stage = {
          step: e.step,
          epoch: e.epoch,
          stage: e.stage,
          detail: e.detail,
          total: e.total,
          done: e.total ? 0 : undefined,
          since: e.time,
        };
        break;
      case 'stage_progress':
        if (this.stage && this.stage.stage === e.stage && this.stage.step === e.step) {
          this.stage.done = e.done;
          this.stage.total = e.total;
        }
        break;
      case 'stage_finished':
        if (this.stage && this.stage.stage === e.stage && this.stage.step === e.step) this.stage = undefined;
        break;
      case 'step_finished':
        this.lastStepFinished = Math.max(this.lastStepFinished, e.step);
        this.stepTimes.set(e.step, { seconds: e.seconds, timing: e.timing });
        break;
      case 'epoch_boundary':
        this.epochEvents = this.epochEvents.filter((x) => !(x.epoch === e.epoch && x.kind === e.kind));
        this.epochEvents.push({ epoch: e.epoch, kind: e.kind, action: e.action, detail: e.detail });
        break;
      case 'log':
        this.logs.push({ time: e.time, level: e.level, message: e.message });
        if (this.logs.length > 100) this.logs.splice(0, this.logs.length - 100);
        break;
      case 'run_finished':
      case 'run_stopped':
      case 'run_failed':
        this.ended = e;
        this.stage = undefined;
        break;
      case 'gate_decision':
        this.gates.set(e.step, e);
        break;
    }
  }
}

export function parseEvent(line: unknown): RunEvent | undefined {
  const parsed = EventSchema.safeParse(line);
  return parsed.success ? parsed.data : undefined;
}

/** The fields of a `calls.jsonl` line the dashboard counts. */
const CallLineSchema = z
  .object({
    purpose: z.string().default('other'),
    model: z.string().optional(),
    from: z.enum(['provider', 'cache', 'journal']).default('provider'),
    usage: z
      .object({
        input: z.number().default(0),
        output: z.number().default(0),
        cached: z.number().default(0),
        reasoning: z.number().default(0),
      })
      .loose()
      .default({ input: 0, output: 0, cached: 0, reasoning: 0 }),
    cost_usd: z.number().nullable().default(null),
    error: z.string().optional(),
  })
  .loose();
export type CallLine = z.infer<typeof CallLineSchema>;

export function parseCall(line: unknown): CallLine | undefined {
  const parsed = CallLineSchema.safeParse(line);
  return parsed.success ? parsed.data : undefined;
}

export interface UsageTotals {
  /** Calls that reached a provider (the ones that cost). */
  calls: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** USD of the calls with a known price. */
  costUsd: number;
  /** Provider calls without a price: then `costUsd` is a lower bound. */
  unpricedCalls: number;
  /** Calls answered by the response cache or replayed from the run's own record. */
  reusedCalls: number;
  failedCalls: number;
}

export const emptyUsage = (): UsageTotals => ({
  calls: 0,
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  reasoningTokens: 0,
  costUsd: 0,
  unpricedCalls: 0,
  reusedCalls: 0,
  failedCalls: 0,
});

/** The ledger reduced to totals, overall and per purpose (stage). */
export class CallFold {
  total = emptyUsage();
  byPurpose: Record<string, UsageTotals> = {};

  add(c: CallLine): void {
    const stage = (this.byPurpose[c.purpose] ??= emptyUsage());
    for (const t of [this.total, stage]) {
      if (c.error) t.failedCalls++;
      if (c.from !== 'provider') {
        t.reusedCalls++;
        continue;
      }
      t.calls++;
      t.promptTokens += c.usage.input;
      t.completionTokens += c.usage.output;
      t.cachedTokens += c.usage.cached;
      t.reasoningTokens += c.usage.reasoning;
      if (c.cost_usd === null) t.unpricedCalls++;
      else t.costUsd += c.cost_usd;
    }
  }
}

/** Whether the process named by a run lock still runs (a lock from another host is trusted). */
export function lockHolderAlive(lock: { pid?: unknown; host?: unknown } | undefined): boolean {
  if (!lock || typeof lock.pid !== 'number') return false;
  if (typeof lock.host === 'string' && lock.host !== os.hostname()) return true;
  try {
    process.kill(lock.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
