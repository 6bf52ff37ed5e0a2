/**
 * One run directory as the dashboard sees it: its overview (a row of the runs table), its
 * detail (status, tests, epochs, usage) and its step records. Every file may be missing (a run
 * that has just started, a run of the original Python SkillOpt) or broken (then the run still
 * shows, with the problem in words).
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { RunDir } from '../../run/layout.ts';
import {
  HistoryRecordSchema,
  RuntimeStateSchema,
  SummarySchema,
  type HistoryRecord,
  type GainCost,
  type TaskCost,
  type Transfer,
} from '../../run/records.ts';
import { CachedJson, JsonlTail } from '../files/file-cache.ts';
import { isFileInside } from '../files/safe-path.ts';
import {
  baselineFromRollouts,
  describeConfig,
  readEpochs,
  readTests,
  stageUsageFromFiles,
  sumStages,
  type EpochInfo,
  type TestRow,
} from '../files/run-files.ts';
import { WATCHED } from '../server/live.ts';
import { runStatus, type RunStatus } from './run-status.ts';
import { stepRow, type StepRow } from './step-rows.ts';
import type { RunLocation } from '../files/roots.ts';
import {
  CallFold,
  EventFold,
  emptyUsage,
  parseCall,
  parseEvent,
  type LiveStage,
  type UsageTotals,
} from './run-state.ts';

const AnyObject = z.record(z.string(), z.unknown());
const AnyList = z.array(z.unknown());
const LockSchema = z.object({ pid: z.number(), host: z.string().optional() }).loose();

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
  /** A finished run's cost of one test task with the initial and the best skill, and what its gain cost. */
  taskCost?: { initial?: TaskCost; best?: TaskCost; gain?: GainCost };
  /** A finished run's audit of its best skill, and its test figures shown from another run's seal. */
  audit?: { verdict: string; checks: string[]; failing: string[]; shownFromSeals: string[] };
  usage: Usage;
  startedAt?: string;
  updatedAt: number;
  problems: string[];
}

export interface RunDetail extends RunOverview {
  config?: Record<string, unknown>;
  baselineSelection: number | null;
  epochs: EpochInfo[];
  tests: TestRow[];
  usageByStage: Record<string, UsageTotals>;
  logs: { time: string; level: string; message: string }[];
  /** `evaluation.transfer_targets`: the initial and best skills on each other target. */
  transfer?: Transfer;
  /** The run keeps a pool of candidate skills (`optimizer.pool_size` above 1, or a lineage file). */
  pool: boolean;
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
    const base = r.root;
    this.config = new CachedJson(base, r.config, AnyObject, 'a JSON object (the run configuration)');
    this.historyRaw = new CachedJson(base, r.history, AnyList, 'a list of step records');
    this.runtime = new CachedJson(
      base,
      r.runtimeState,
      RuntimeStateSchema,
      'the runtime state (last_completed_step, scores, status)',
    );
    this.summary = new CachedJson(base, r.summary, SummarySchema, 'the run summary');
    this.lock = new CachedJson(base, r.path('run.lock'), LockSchema, 'a run lock');
    this.events = new JsonlTail(base, r.events, parseEvent, {
      item: (e) => this.eventFold.add(e),
      reset: () => (this.eventFold = new EventFold()),
    });
    this.calls = new JsonlTail(base, r.calls, parseCall, {
      item: (c) => this.callFold.add(c),
      reset: () => (this.callFold = new CallFold()),
    });
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
          this.recordProblems.push(
            `${this.run.history}: record ${i + 1} is not a step record (${issue?.path.join('.') || 'record'}: ${issue?.message}); it is left out`,
          );
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
      .map((r) => stepRow(r, times.get(r.step)));
  }

  /** The gate's decision at a step as the event log has it (scores before the decision). */
  gateEvent(step: number) {
    this.events.refresh();
    return this.eventFold.gates.get(step);
  }

  record(step: number): HistoryRecord | undefined {
    return this.history().records.find((r) => r.step === step);
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
    if (this.events.bad > 0)
      problems.push(`${this.run.events}: ${this.events.bad} line(s) are not events and were skipped`);
    for (const tail of [this.events, this.calls]) {
      if (tail.problem) problems.push(tail.problem);
      if (tail.reading) problems.push(tail.reading);
    }
    const lockProblem = this.lock.problem();
    if (lockProblem) problems.push(lockProblem);

    const fold = this.eventFold;
    const desc = describeConfig(config);
    const layout = desc.layout ?? (fs.existsSync(this.run.events) ? 'skillopt' : 'python');
    const last = records.at(-1);
    const completedSteps = Math.max(last?.step ?? 0, runtime?.last_completed_step ?? 0, fold.lastStepFinished);
    const epochs = fold.started?.epochs ?? desc.epochs;
    const totalSteps =
      fold.started?.total_steps ??
      desc.totalSteps ??
      (desc.epochs && desc.stepsPerEpoch ? desc.epochs * desc.stepsPerEpoch : undefined);
    const { status, detail } = runStatus(this.eventFold, runtime, summary, layout, this.lock.value());
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
      progress: {
        completedSteps,
        totalSteps,
        epoch: fold.stage?.epoch ?? last?.epoch,
        epochs,
        stage: status === 'running' ? fold.stage : undefined,
      },
      bestScore: runtime?.best_score ?? last?.best_score ?? summary?.best_selection_hard ?? null,
      bestStep: runtime?.best_step ?? last?.best_step ?? summary?.best_step,
      currentScore: runtime?.current_score ?? last?.current_score ?? null,
      test: {
        baseline: summary?.baseline_test_hard ?? finished?.baseline_test ?? null,
        best: summary?.test_hard ?? finished?.best_test ?? null,
        final: summary?.final_test_hard ?? finished?.final_test ?? null,
      },
      ...(summary?.cost_per_task
        ? { taskCost: { ...(summary.cost_per_task as object), gain: summary.gain_cost as GainCost } }
        : {}),
      ...(summary?.audit?.best
        ? {
            audit: {
              verdict: summary.audit.best.verdict,
              checks: summary.audit.best.checks.map((c) => c.check),
              failing: summary.audit.best.checks
                .filter((c) => c.verdict !== 'pass')
                .map((c) => `${c.check}: ${c.summary}`),
              shownFromSeals: Object.entries(summary.audit.test_seals ?? {})
                .filter(([, s]) => s.status === 'shown')
                .map(([k]) => k),
            },
          }
        : {}),
      usage: this.usage(summary, records),
      startedAt: fold.started?.time ?? fold.firstTime,
      updatedAt: Math.max(...WATCHED.map((f) => mtime(this.run.path(f)))),
      problems,
    };
  }

  private usage(summary: z.infer<typeof SummarySchema> | undefined, records: HistoryRecord[]): Usage {
    if (this.hasLedger()) return { ...this.callFold.total, source: 'calls' };
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
      epochs: readEpochs(this.run, records, this.eventFold.epochEvents),
      tests: readTests(this.run, overview.problems),
      usageByStage: this.hasLedger() ? this.callFold.byPurpose : stageUsageFromFiles(summary?.token_summary, records),
      logs: this.eventFold.logs.slice(-30),
      ...(summary?.transfer ? { transfer: summary.transfer } : {}),
      pool: this.hasPool(),
    };
  }

  /** The last `run_started` event (how the run was last started) and the terminal event after it, if any. */
  lifecycle(): { started?: EventFold['started']; ended?: EventFold['ended'] } {
    this.events.refresh();
    return { started: this.eventFold.started, ended: this.eventFold.ended };
  }

  /** The run lock's content, as read (undefined when there is none). */
  lockContent(): unknown {
    return this.lock.value();
  }

  /** The config file the run was started from (our `config.json` names it). */
  configFile(): string | undefined {
    const file = this.config.value()?.config_file;
    return typeof file === 'string' && file ? file : undefined;
  }

  /** The budget limits the run was last started with (our `config.json`), when it says. */
  budget(): Record<string, number> | undefined {
    const budget = (this.config.value()?.config as { budget?: unknown } | undefined)?.budget;
    return budget && typeof budget === 'object' ? (budget as Record<string, number>) : undefined;
  }

  private hasPool(): boolean {
    const size = (this.config.value()?.config as { optimizer?: { pool_size?: unknown } } | undefined)?.optimizer
      ?.pool_size;
    return (typeof size === 'number' && size > 1) || isFileInside(this.run.root, this.run.path('pool', 'lineage.json'));
  }

  /** Whether the run has a call ledger that reads (then its totals are exact). */
  private hasLedger(): boolean {
    return isFileInside(this.run.root, this.run.calls);
  }

  /** The initial skill's selection score: from the summary, else from its rollout (a run in progress). */
  baselineSelection(): number | null {
    const baseline = (this.runtime.value() as { baseline_score?: unknown } | undefined)?.baseline_score;
    return (
      this.summary.value()?.baseline_selection_hard ??
      (typeof baseline === 'number' ? baseline : baselineFromRollouts(this.run))
    );
  }
}
