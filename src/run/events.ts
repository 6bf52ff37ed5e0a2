/**
 * The run's event log: typed events appended to `events.jsonl` as they happen. The console
 * reporter and the dashboard both read it; nothing else is needed to follow a run. Every event
 * is redacted (key values, key-shaped strings, URL credentials) before it is written or shown.
 */
import { z } from 'zod';
import { redactDeep } from '../config/redact.ts';
import { AppendFile, readJsonLines } from './atomic.ts';
import { GATE_ACTIONS, STEP_ACTIONS } from './records.ts';

/** The stages a run reports: the baseline, the six of a step (and the audit of an accept, a pool's merge), the slow update, the final evaluation and the transfer check. */
export const STAGES = [
  'baseline',
  'rollout',
  'reflect',
  'aggregate',
  'select',
  'update',
  'evaluate',
  'audit',
  'pool_merge',
  'slow_update',
  'final_evaluation',
  'transfer',
] as const;
export type Stage = (typeof STAGES)[number];

/** What an epoch boundary did: the slow update's outcomes (a gate action among them), then the meta skill's. */
export const BOUNDARY_ACTIONS = [
  'inject_placeholder',
  'no_content',
  'over_length_limit',
  ...GATE_ACTIONS,
  'skip_first_epoch',
  'write_meta_skill',
] as const;
type BoundaryAction = (typeof BOUNDARY_ACTIONS)[number];
export type SlowUpdateAction = Exclude<BoundaryAction, 'skip_first_epoch' | 'write_meta_skill'>;
export type MetaSkillAction = Extract<BoundaryAction, 'skip_first_epoch' | 'write_meta_skill' | 'no_content'>;
const stage = z.enum(STAGES);

const base = { time: z.string() };
const num = z.number();
const score = z.number().nullable();

export const EventSchema = z.discriminatedUnion('type', [
  z.object({
    ...base,
    type: z.literal('run_started'),
    out_root: z.string(),
    env: z.string(),
    target: z.string(),
    optimizer: z.string(),
    epochs: num,
    steps_per_epoch: num,
    total_steps: num,
    resume_from: num,
    /** The judge model, when it is not the optimizer's. */
    judge: z.string().optional(),
    /** Items per split, and how many of val and test are used (selection, test). */
    data: z.object({ train: num, val: num, test: num, selection: num, test_used: num }).optional(),
    batch_size: num.optional(),
    /** The limits of `budget.*` that are set, e.g. `max_calls=500`; empty: no limit. */
    budget: z.array(z.string()).optional(),
    /** The run's config.json (the full resolved config). */
    config_path: z.string().optional(),
    /** The command that resumes this run if it stops. */
    resume_command: z.string().optional(),
  }),
  z.object({
    ...base,
    type: z.literal('stage_started'),
    step: num,
    epoch: num,
    stage,
    total: num.optional(),
    detail: z.string().optional(),
    /** The codes behind the detail, as the records hold them (`--verbose` prints them). */
    stats: z.record(z.string(), z.union([num, z.string(), z.boolean(), z.null()])).optional(),
  }),
  z.object({
    ...base,
    type: z.literal('stage_progress'),
    step: num,
    stage,
    done: num,
    total: num,
    /** What the bar shows (default: the stage), e.g. an evaluation's skill and target. */
    label: z.string().optional(),
  }),
  z.object({
    ...base,
    type: z.literal('stage_finished'),
    step: num,
    epoch: num,
    stage,
    seconds: num,
    detail: z.string().optional(),
    stats: z.record(z.string(), z.union([num, z.string(), z.boolean(), z.null()])).optional(),
  }),
  z.object({
    ...base,
    type: z.literal('gate_decision'),
    step: num,
    epoch: num,
    action: z.enum(GATE_ACTIONS),
    metric: z.string(),
    candidate_score: score,
    current_score: score,
    best_score: score,
    rollouts_used: num,
    rollouts_saved: num,
    /** The evaluation stopped once a reject was certain; candidate_score is then the best it could have reached. */
    early_stopped: z.boolean().optional(),
    /** An early accept (evaluation.gate_early_accept): the selection items scored when it was certain; the rest ran beside the next step. */
    accepted_after: num.optional(),
    /** The paired gate's test: mean effect per item, one-sided p-value. */
    test: z.object({ method: z.string(), n: num, effect: num, p: num, alpha: num, passed: z.boolean() }).optional(),
  }),
  z.object({
    ...base,
    /** The next step's rollouts started while the gate ran (evaluation.gate_overlap), once they are done. */
    type: z.literal('gate_overlap'),
    step: num,
    epoch: num,
    /** The skill they ran under: the gate's candidate or the current skill. */
    guess: z.enum(['candidate', 'current']),
    /** Whether the next step starts from that skill (then it takes their results). */
    right: z.boolean(),
    /** Rollouts run ahead; those of a wrong guess are wasted. */
    rollouts: num,
    wasted: num,
  }),
  z.object({
    ...base,
    /** The optimizer calls of this step's reflection made ahead during the previous step's gate (evaluation.gate_overlap), once the step has made its own. */
    type: z.literal('reflect_ahead'),
    step: num,
    epoch: num,
    /** Calls made ahead; those the step took; the rest, wasted (a wrong guess, or a memory entry other than the guessed one). */
    calls: num,
    taken: num,
    wasted: num,
  }),
  z.object({
    ...base,
    /** The update skipped some of the step's edits (unknown op, target not found, over the token limit, …). */
    type: z.literal('edits_skipped'),
    step: num,
    epoch: num,
    total: num,
    skipped: num,
    /** Why, in words, with how many each. */
    reasons: z.string(),
  }),
  z.object({
    ...base,
    type: z.literal('step_finished'),
    step: num,
    epoch: num,
    action: z.enum(STEP_ACTIONS),
    current_score: score,
    best_score: score,
    seconds: num,
    timing: z.record(z.string(), num).optional(),
  }),
  z.object({
    ...base,
    type: z.literal('epoch_boundary'),
    epoch: num,
    kind: z.enum(['slow_update', 'meta_skill']),
    action: z.enum(BOUNDARY_ACTIONS),
    detail: z.string().optional(),
  }),
  z.object({ ...base, type: z.literal('log'), level: z.enum(['info', 'warn']), message: z.string() }),
  z.object({
    ...base,
    type: z.literal('run_finished'),
    best_step: num,
    best_score: score,
    baseline_test: score,
    best_test: score,
    final_test: score,
    seconds: num,
  }),
  /** Stopped by a limit (`reason`: budget, wait) or by the user (interrupted), resumably. */
  z.object({
    ...base,
    type: z.literal('run_stopped'),
    reason: z.string(),
    message: z.string(),
    resume_command: z.string().optional(),
  }),
  /** The stack is kept for failures that are bugs (not a user's input error or a model refusing). */
  z.object({
    ...base,
    type: z.literal('run_failed'),
    message: z.string(),
    stack: z.string().optional(),
    resume_command: z.string().optional(),
  }),
  /** Calls of a role are failing and being retried (at most one event per role every few seconds). */
  z.object({
    ...base,
    type: z.literal('model_retry'),
    role: z.string(),
    model: z.string(),
    failures: num,
    total: num,
    kind: z.string(),
    retrying: z.boolean(),
    last_error: z.string(),
    hint: z.string().optional(),
  }),
  /** Calls of a role wait (a rate limit, a backoff, a used-up window), shown when the wait is long. */
  z.object({
    ...base,
    type: z.literal('model_wait'),
    role: z.string(),
    model: z.string(),
    reason: z.string(),
    seconds: num,
    until: z.string(),
  }),
]);
export type RunEvent = z.infer<typeof EventSchema>;
export type EventInput = RunEvent extends infer E ? (E extends RunEvent ? Omit<E, 'time'> : never) : never;
export type Listener = (event: RunEvent) => void;

export class EventLog {
  private listeners: Listener[] = [];
  private lastProgress = new Map<string, number>();
  private readonly out?: AppendFile;

  /** `file` undefined: events reach listeners only (evaluation without a run directory). */
  constructor(file?: string) {
    if (file) this.out = new AppendFile(file);
  }

  close(): void {
    this.out?.close();
  }

  on(listener: Listener): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  emit(input: EventInput): void {
    const event = redactDeep({ time: new Date().toISOString(), ...input } as RunEvent);
    if (this.out && this.shouldPersist(event)) this.out.append(JSON.stringify(event));
    for (const l of this.listeners) l(event);
  }

  info(message: string): void {
    this.emit({ type: 'log', level: 'info', message });
  }

  warn(message: string): void {
    this.emit({ type: 'log', level: 'warn', message });
  }

  /** Progress is written at most twice a second per stage (and always at the end). */
  private shouldPersist(event: RunEvent): boolean {
    if (event.type !== 'stage_progress') return true;
    const key = `${event.step}:${event.stage}`;
    const now = Date.now();
    if (event.done < event.total && now - (this.lastProgress.get(key) ?? 0) < 500) return false;
    this.lastProgress.set(key, now);
    return true;
  }
}

/** Events of a run, in order; lines that do not match the schema are skipped. */
export function readEvents(file: string): RunEvent[] {
  return readJsonLines(file).flatMap((line) => {
    const parsed = EventSchema.safeParse(line);
    return parsed.success ? [parsed.data] : [];
  });
}
