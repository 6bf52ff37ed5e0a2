/**
 * One run directory as the dashboard sees it: its overview (a row of the runs table), its
 * detail (status, tests, epochs, usage) and its step records. Every file may be missing (a run
 * that has just started, a run of the original Python SkillOpt) or broken (then the run still
 * shows, with the problem in words).
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { RunDir } from '../run/layout.ts';
import { HistoryRecordSchema, RuntimeStateSchema, SummarySchema, type HistoryRecord, type StageUsage } from '../run/records.ts';
import { CachedJson, JsonlTail } from './file-cache.ts';
import type { RunLocation } from './roots.ts';
import { CallFold, EventFold, emptyUsage, lockHolderAlive, parseCall, parseEvent, type LiveStage, type UsageTotals } from './run-state.ts';

export type RunStatus = 'running' | 'finished' | 'failed' | 'stopped' | 'interrupted' | 'incomplete';

const AnyObject = z.record(z.string(), z.unknown());
const AnyList = z.array(z.unknown());
const LockSchema = z.object({ pid: z.number(), host: z.string().optional() }).loose();
/** `summary.json` of the test evaluations: per task type, `{total, hard_acc}`. */
const TestBucketsSchema = z.record(z.string(), z.object({ total: z.number().optional(), hard_acc: z.number().optional(), hard: z.number().optional() }).loose());

export interface Usage extends UsageTotals {
  /** Where the totals come from: the call ledger (exact), the summary, or the step records (steps only). */
  source: 'calls' | 'summary' | 'history' | 'none';
}

export interface RunOverview {
  id: string;
  name: string;
  root: string;
  dir: string;
  layout: 'skillopt' | 'python';
  env?: string;
  target?: string;
  optimizer?: string;
  status: RunStatus;
  statusDetail?: string;
  progress: { completedSteps: number; totalSteps?: number; epoch?: number; epochs?: number; stage?: LiveStage };
  bestScore?: number | null;
  bestStep?: number;
  currentScore?: number | null;
  test: { baseline: number | null; best: number | null; final: number | null };
  usage: Usage;
  startedAt?: string;
  updatedAt: number;
  problems: string[];
}

/** The fields of a step record the dashboard draws. */
export type StepRow = Pick<
  HistoryRecord,
  | 'step'
  | 'epoch'
  | 'action'
  | 'rollout_hard'
  | 'rollout_soft'
  | 'rollout_n'
  | 'rollout_errors'
  | 'selection_hard'
  | 'selection_soft'
  | 'candidate_gate_score'
  | 'gate_metric'
  | 'current_score'
  | 'best_score'
  | 'best_step'
  | 'edit_budget'
  | 'timing'
  | 'tokens'
  | 'gate'
  | 'edit_apply_summary'
  | 'n_edits_merged'
  | 'n_edits_ranked'
  | 'skill_len'
  | 'wall_time_s'
>;
const ROW_KEYS: (keyof StepRow)[] = [
  'step',
  'epoch',
  'action',
  'rollout_hard',
  'rollout_soft',
  'rollout_n',
  'rollout_errors',
  'selection_hard',
  'selection_soft',
  'candidate_gate_score',
  'gate_metric',
  'current_score',
  'best_score',
  'best_step',
  'edit_budget',
  'timing',
  'tokens',
  'gate',
  'edit_apply_summary',
  'n_edits_merged',
  'n_edits_ranked',
  'skill_len',
  'wall_time_s',
];

export interface EpochInfo {
  epoch: number;
  /** Last step of the epoch, from the step records. */
  lastStep?: number;
  slowUpdate?: Record<string, unknown> & { action?: string };
  metaSkill?: Record<string, unknown> & { action?: string };
}

export interface TestRow {
  type: string;
  baseline?: { total?: number; hard_acc?: number };
  best?: { total?: number; hard_acc?: number };
  final?: { total?: number; hard_acc?: number };
}

export interface RunDetail extends RunOverview {
  config?: Record<string, unknown>;
  baselineSelection: number | null;
  epochs: EpochInfo[];
  tests: TestRow[];
  usageByStage: Record<string, UsageTotals>;
  logs: { time: string; level: string; message: string }[];
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function modelLabel(model: unknown, backend: unknown): string | undefined {
  const m = str(model);
  const b = str(backend);
  if (m && b && m !== b) return `${m} (${b})`;
  return m ?? b;
}

/** Env, models and planned length from a config, structured (ours) or flat (the original's). */
export function describeConfig(file: Record<string, unknown> | undefined) {
  if (!file) return {};
  // Ours: { config, derived, files }; the original's: the flat config itself.
  const wrapped = typeof file.config === 'object' && file.config !== null && !Array.isArray(file.config);
  const cfg = wrapped ? (file.config as Record<string, unknown>) : file;
  const derived = (wrapped ? file.derived : undefined) as Record<string, unknown> | undefined;
  const model = cfg.model as Record<string, Record<string, unknown>> | undefined;
  if (model && typeof model === 'object' && typeof model.target === 'object') {
    const env = cfg.env as Record<string, unknown> | undefined;
    const train = cfg.train as Record<string, unknown> | undefined;
    return {
      layout: 'skillopt' as const,
      env: str(env?.name),
      target: modelLabel(model.target?.model, model.target?.backend),
      optimizer: modelLabel(model.optimizer?.model, model.optimizer?.backend),
      epochs: num(train?.num_epochs),
      stepsPerEpoch: num(derived?.steps_per_epoch) ?? num(train?.steps_per_epoch),
      totalSteps: num(derived?.total_steps),
    };
  }
  const backend = cfg.model_backend;
  return {
    layout: 'python' as const,
    env: str(cfg.env),
    target: modelLabel(cfg.target_model, cfg.target_backend ?? backend),
    optimizer: modelLabel(cfg.optimizer_model, cfg.optimizer_backend ?? backend),
    epochs: num(cfg.num_epochs),
    stepsPerEpoch: num(cfg.steps_per_epoch),
    totalSteps: undefined,
  };
}

function sumStages(stages: Record<string, StageUsage>, into: UsageTotals): void {
  for (const [stage, s] of Object.entries(stages)) {
    if (stage === '_total') continue;
    into.calls += s.calls;
    into.promptTokens += s.prompt_tokens;
    into.completionTokens += s.completion_tokens;
    into.cachedTokens += s.cached_tokens ?? 0;
    into.reasoningTokens += s.reasoning_tokens ?? 0;
    if (s.cost_usd === null || s.cost_usd === undefined) {
      if (s.calls > 0) into.unpricedCalls += s.calls;
    } else into.costUsd += s.cost_usd;
  }
}

function mtime(file: string): number {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

export class RunReader {
  readonly run: RunDir;
  private readonly config: CachedJson<Record<string, unknown>>;
  private readonly historyRaw: CachedJson<unknown[]>;
  private readonly runtime: CachedJson<z.infer<typeof RuntimeStateSchema>>;
  private readonly summary: CachedJson<z.infer<typeof SummarySchema>>;
  private readonly lock: CachedJson<z.infer<typeof LockSchema>>;
  private readonly events: JsonlTail<ReturnType<typeof parseEvent> & object>;
  private readonly calls: JsonlTail<NonNullable<ReturnType<typeof parseCall>>>;
  private eventFold = new EventFold();
  private callFold = new CallFold();
  private parsedFrom?: unknown[];
  private records: HistoryRecord[] = [];
  private recordProblems: string[] = [];

  constructor(readonly loc: RunLocation) {
    this.run = new RunDir(loc.dir);
    const r = this.run;
    this.config = new CachedJson(r.config, AnyObject, 'a JSON object (the run configuration)');
    this.historyRaw = new CachedJson(r.history, AnyList, 'a list of step records');
    this.runtime = new CachedJson(r.runtimeState, RuntimeStateSchema, 'the runtime state (last_completed_step, scores, status)');
    this.summary = new CachedJson(r.summary, SummarySchema, 'the run summary');
    this.lock = new CachedJson(r.path('run.lock'), LockSchema, 'a run lock');
    this.events = new JsonlTail(r.events, parseEvent, { item: (e) => this.eventFold.add(e), reset: () => (this.eventFold = new EventFold()) });
    this.calls = new JsonlTail(r.calls, parseCall, { item: (c) => this.callFold.add(c), reset: () => (this.callFold = new CallFold()) });
  }

  /** The step records, each checked; a record that does not read is left out and named. */
  history(): { records: HistoryRecord[]; problems: string[] } {
    const read = this.historyRaw.read();
    if (!read.ok) {
      this.parsedFrom = undefined;
      this.records = [];
      this.recordProblems = read.missing ? [] : [read.error];
      return { records: this.records, problems: this.recordProblems };
    }
    if (read.value !== this.parsedFrom) {
      this.parsedFrom = read.value;
      this.records = [];
      this.recordProblems = [];
      read.value.forEach((raw, i) => {
        const parsed = HistoryRecordSchema.safeParse(raw);
        if (parsed.success) this.records.push(parsed.data);
        else {
          const issue = parsed.error.issues[0];
          this.recordProblems.push(`${this.run.history}: record ${i + 1} is not a step record (${issue?.path.join('.') || 'record'}: ${issue?.message}); it is left out`);
        }
      });
    }
    return { records: this.records, problems: this.recordProblems };
  }

  /** Step records after `since`, reduced to what the charts and tables use. */
  rows(since = 0): StepRow[] {
    this.events.refresh();
    const times = this.eventFold.stepTimes;
    return this.history()
      .records.filter((r) => r.step > since)
      .map((r) => {
        const row: Record<string, unknown> = {};
        for (const k of ROW_KEYS) if (r[k] !== undefined) row[k] = r[k];
        // Wall-clock times are in the event log (our history.json leaves them out to stay reproducible).
        const t = times.get(r.step);
        if (t) {
          row.timing ??= t.timing;
          row.wall_time_s ??= t.seconds;
        }
        return row as StepRow;
      });
  }

  /** The gate's decision at a step as the event log has it (scores before the decision). */
  gateEvent(step: number) {
    this.events.refresh();
    return this.eventFold.gates.get(step);
  }

  record(step: number): HistoryRecord | undefined {
    return this.history().records.find((r) => r.step === step);
  }

  /** Files whose change should refresh a page showing this run. */
  watchedFiles(): string[] {
    const r = this.run;
    return [r.history, r.runtimeState, r.summary, r.events, r.config];
  }

  overview(): RunOverview {
    this.events.refresh();
    this.calls.refresh();
    const problems: string[] = [];
    const config = this.config.value();
    const cfgProblem = this.config.problem();
    if (cfgProblem) problems.push(cfgProblem);
    const { records, problems: historyProblems } = this.history();
    problems.push(...historyProblems);
    const runtime = this.runtime.value();
    const rsProblem = this.runtime.problem();
    if (rsProblem) problems.push(rsProblem);
    const summary = this.summary.value();
    const sumProblem = this.summary.problem();
    if (sumProblem) problems.push(sumProblem);
    if (this.events.bad > 0) problems.push(`${this.run.events}: ${this.events.bad} line(s) are not events and were skipped`);

    const fold = this.eventFold;
    const desc = describeConfig(config);
    const layout = desc.layout ?? (fs.existsSync(this.run.events) ? 'skillopt' : 'python');
    const last = records.at(-1);
    const completedSteps = Math.max(last?.step ?? 0, runtime?.last_completed_step ?? 0, fold.lastStepFinished);
    const epochs = fold.started?.epochs ?? desc.epochs;
    const totalSteps = fold.started?.total_steps ?? desc.totalSteps ?? (desc.epochs && desc.stepsPerEpoch ? desc.epochs * desc.stepsPerEpoch : undefined);
    const { status, detail } = this.status(runtime, summary, layout);
    const finished = fold.ended?.type === 'run_finished' ? fold.ended : undefined;

    return {
      id: this.loc.id,
      name: this.loc.rel || path.basename(this.loc.dir),
      root: this.loc.root.given,
      dir: this.loc.dir,
      layout,
      env: desc.env ?? fold.started?.env,
      target: desc.target ?? fold.started?.target,
      optimizer: desc.optimizer ?? fold.started?.optimizer,
      status,
      statusDetail: detail,
      progress: { completedSteps, totalSteps, epoch: fold.stage?.epoch ?? last?.epoch, epochs, stage: status === 'running' ? fold.stage : undefined },
      bestScore: runtime?.best_score ?? last?.best_score ?? summary?.best_selection_hard ?? null,
      bestStep: runtime?.best_step ?? last?.best_step ?? summary?.best_step,
      currentScore: runtime?.current_score ?? last?.current_score ?? null,
      test: {
        baseline: summary?.baseline_test_hard ?? finished?.baseline_test ?? null,
        best: summary?.test_hard ?? finished?.best_test ?? null,
        final: summary?.final_test_hard ?? finished?.final_test ?? null,
      },
      usage: this.usage(summary, records),
      startedAt: fold.started?.time ?? fold.firstTime,
      updatedAt: Math.max(...this.watchedFiles().map(mtime)),
      problems,
    };
  }

  private status(runtime: z.infer<typeof RuntimeStateSchema> | undefined, summary: unknown, layout: 'skillopt' | 'python'): { status: RunStatus; detail?: string } {
    const ended = this.eventFold.ended;
    const endedStatus = ended?.type === 'run_finished' ? 'finished' : ended?.type === 'run_stopped' ? 'stopped' : ended?.type === 'run_failed' ? 'failed' : undefined;
    const detail = ended?.type === 'run_stopped' ? `${ended.reason}: ${ended.message}` : ended?.type === 'run_failed' ? ended.message : undefined;
    const declared = runtime?.status ?? endedStatus;
    if (declared && declared !== 'running') return { status: declared, detail };
    if (declared === 'running' || (this.eventFold.started && !ended)) {
      if (lockHolderAlive(this.lock.value())) return { status: 'running' };
      return { status: 'interrupted', detail: 'the training process is gone without finishing (resume it with the same command)' };
    }
    if (summary) return { status: 'finished' };
    return {
      status: 'incomplete',
      detail: layout === 'python' ? 'no summary.json: still running, or stopped before the end' : 'no summary.json and no event log',
    };
  }

  private usage(summary: z.infer<typeof SummarySchema> | undefined, records: HistoryRecord[]): Usage {
    if (fs.existsSync(this.run.calls)) return { ...this.callFold.total, source: 'calls' };
    const totals = emptyUsage();
    if (summary?.token_summary) {
      sumStages(summary.token_summary, totals);
      return { ...totals, source: 'summary' };
    }
    let any = false;
    for (const r of records) {
      if (r.tokens) {
        sumStages(r.tokens, totals);
        any = true;
      }
    }
    return { ...totals, source: any ? 'history' : 'none' };
  }

  detail(): RunDetail {
    const overview = this.overview();
    const summary = this.summary.value();
    const { records } = this.history();
    return {
      ...overview,
      config: this.config.value(),
      baselineSelection: this.baselineSelection(),
      epochs: this.epochs(records),
      tests: this.tests(),
      usageByStage: fs.existsSync(this.run.calls) ? this.callFold.byPurpose : this.stageUsageFromFiles(summary, records),
      logs: this.eventFold.logs.slice(-30),
    };
  }

  private stageUsageFromFiles(summary: z.infer<typeof SummarySchema> | undefined, records: HistoryRecord[]): Record<string, UsageTotals> {
    const out: Record<string, UsageTotals> = {};
    const add = (stages: Record<string, StageUsage>) => {
      for (const [stage, s] of Object.entries(stages)) if (stage !== '_total') sumStages({ [stage]: s }, (out[stage] ??= emptyUsage()));
    };
    if (summary?.token_summary) add(summary.token_summary);
    else for (const r of records) if (r.tokens) add(r.tokens);
    return out;
  }

  /** The initial skill's selection score: from the summary, else from its rollout (a run in progress). */
  baselineSelection(): number | null {
    const baseline = (this.runtime.value() as { baseline_score?: unknown } | undefined)?.baseline_score;
    return this.summary.value()?.baseline_selection_hard ?? (typeof baseline === 'number' ? baseline : this.baselineFromRollouts());
  }

  private baselineFromRollouts(): number | null {
    const file = this.run.path('selection_eval_baseline', 'results.jsonl');
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      return null;
    }
    let sum = 0;
    let n = 0;
    for (const line of text.split('\n')) {
      try {
        const row = JSON.parse(line) as { hard?: unknown; error?: unknown };
        if (typeof row.hard === 'number' && !row.error) {
          sum += row.hard;
          n++;
        }
      } catch {
        // a torn or blank line
      }
    }
    return n ? sum / n : null;
  }

  private epochs(records: HistoryRecord[]): EpochInfo[] {
    const byEpoch = new Map<number, EpochInfo>();
    const get = (e: number) => byEpoch.get(e) ?? byEpoch.set(e, { epoch: e }).get(e)!;
    for (const r of records) {
      const info = get(r.epoch);
      info.lastStep = Math.max(info.lastStep ?? 0, r.step);
    }
    for (const [dir, file, key] of [
      ['slow_update', 'slow_result.json', 'slowUpdate'],
      ['meta_skill', 'meta_skill_result.json', 'metaSkill'],
    ] as const) {
      let names: string[] = [];
      try {
        names = fs.readdirSync(this.run.path(dir));
      } catch {
        continue;
      }
      for (const name of names) {
        const m = /^epoch_(\d+)$/.exec(name);
        if (!m) continue;
        const f = this.run.path(dir, name, file);
        try {
          const value = JSON.parse(fs.readFileSync(f, 'utf8')) as Record<string, unknown>;
          get(Number(m[1]))[key] = value;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') get(Number(m[1]))[key] = { action: 'unreadable', error: `${f}: ${(err as Error).message}` };
        }
      }
    }
    for (const e of this.eventFold.epochEvents) {
      const info = get(e.epoch);
      const key = e.kind === 'slow_update' ? 'slowUpdate' : 'metaSkill';
      info[key] ??= { action: e.action, detail: e.detail };
    }
    return [...byEpoch.values()].sort((a, b) => a.epoch - b.epoch);
  }

  private tests(): TestRow[] {
    const rows = new Map<string, TestRow>();
    for (const [dir, key] of [
      ['test_eval_baseline', 'baseline'],
      ['test_eval', 'best'],
      ['test_eval_final', 'final'],
    ] as const) {
      const cached = new CachedJson(this.run.path(dir, 'summary.json'), TestBucketsSchema, 'test results per task type');
      const buckets = cached.value();
      if (!buckets) continue;
      for (const [type, b] of Object.entries(buckets)) {
        const row = rows.get(type) ?? rows.set(type, { type }).get(type)!;
        const acc = b.hard_acc ?? (b.hard !== undefined && b.total ? b.hard / b.total : undefined);
        row[key] = { total: b.total, hard_acc: acc };
      }
    }
    // 'overall' last, as in the original's table.
    return [...rows.values()].sort((a, b) => (a.type === 'overall' ? 1 : b.type === 'overall' ? -1 : a.type.localeCompare(b.type)));
  }
}
