/**
 * The smaller files of a run, read for its detail page: what the config says (ours or the
 * original's flat one), the epoch-boundary results, the test tables per task type, the initial
 * skill's selection score, and token usage per stage when there is no call ledger.
 */
import { z } from 'zod';
import type { RunDir } from '../../run/layout.ts';
import type { HistoryRecord, StageUsage } from '../../run/records.ts';
import { decisionOf, type Decision } from '../runs/decision.ts';
import { parseJsonFile } from './file-cache.ts';
import { emptyUsage, type EpochEvent, type UsageTotals } from '../runs/run-state.ts';
import { listInside } from './safe-path.ts';
import { resultRows } from '../runs/results-index.ts';

const AnyObject = z.record(z.string(), z.unknown());

/** `summary.json` of the test evaluations: per task type, `{total, hard_acc}`. */
const TestBucketsSchema = z.record(
  z.string(),
  z.object({ total: z.number().optional(), hard_acc: z.number().optional(), hard: z.number().optional() }).loose(),
);

/** A slow update's or meta skill's result file (or its event), with what it decided. */
export type EpochResult = Record<string, unknown> & { action?: string; decision?: Decision };

export interface EpochInfo {
  epoch: number;
  /** Last step of the epoch, from the step records. */
  lastStep?: number;
  slowUpdate?: EpochResult;
  metaSkill?: EpochResult;
}

export interface TestRow {
  type: string;
  baseline?: { total?: number; hard_acc?: number };
  best?: { total?: number; hard_acc?: number };
  final?: { total?: number; hard_acc?: number };
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

export function sumStages(stages: Record<string, StageUsage>, into: UsageTotals): void {
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

/** Each epoch's last step and its slow-update and meta-skill results (files first, else events). */
export function readEpochs(run: RunDir, records: HistoryRecord[], events: EpochEvent[]): EpochInfo[] {
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
    for (const entry of listInside(run.root, run.path(dir))) {
      const m = /^epoch_(\d+)$/.exec(entry.name);
      if (!m) continue;
      const read = parseJsonFile(run.root, run.path(dir, entry.name, file), AnyObject, 'a JSON object');
      if (read.ok) get(Number(m[1]))[key] = read.value;
      else if (!read.missing) get(Number(m[1]))[key] = { action: 'unreadable', error: read.error };
    }
  }
  for (const e of events) {
    const info = get(e.epoch);
    const key = e.kind === 'slow_update' ? 'slowUpdate' : 'metaSkill';
    info[key] ??= { action: e.action, detail: e.detail };
  }
  for (const info of byEpoch.values())
    for (const result of [info.slowUpdate, info.metaSkill])
      if (result && typeof result.action === 'string') result.decision = decisionOf(result.action);
  return [...byEpoch.values()].sort((a, b) => a.epoch - b.epoch);
}

/** The test table: per task type, the initial, best and final skill's scores. */
export function readTests(run: RunDir, problems: string[]): TestRow[] {
  const rows = new Map<string, TestRow>();
  for (const [dir, key] of [
    ['test_eval_baseline', 'baseline'],
    ['test_eval', 'best'],
    ['test_eval_final', 'final'],
  ] as const) {
    const read = parseJsonFile(
      run.root,
      run.path(dir, 'summary.json'),
      TestBucketsSchema,
      'test results per task type ({type: {total, hard_acc}})',
    );
    if (!read.ok) {
      if (!read.missing) problems.push(read.error);
      continue;
    }
    const buckets = read.value;
    for (const [type, b] of Object.entries(buckets)) {
      const row = rows.get(type) ?? rows.set(type, { type }).get(type)!;
      const acc = b.hard_acc ?? (b.hard !== undefined && b.total ? b.hard / b.total : undefined);
      row[key] = { total: b.total, hard_acc: acc };
    }
  }
  // 'overall' last, as in the original's table.
  return [...rows.values()].sort((a, b) =>
    a.type === 'overall' ? 1 : b.type === 'overall' ? -1 : a.type.localeCompare(b.type),
  );
}

/** The mean hard score of the initial skill's selection rollout (a run whose summary is not written yet). */
export function baselineFromRollouts(run: RunDir): number | null {
  const scored = resultRows(run.root, run.path('selection_eval_baseline', 'results.jsonl')).filter(
    (r) => r.outcome !== 'error',
  );
  return scored.length ? scored.reduce((sum, r) => sum + r.hard, 0) / scored.length : null;
}

/** Usage per stage from the summary, else summed over the step records (no call ledger). */
export function stageUsageFromFiles(
  tokenSummary: Record<string, StageUsage> | undefined,
  records: HistoryRecord[],
): Record<string, UsageTotals> {
  const out: Record<string, UsageTotals> = {};
  const add = (stages: Record<string, StageUsage>) => {
    for (const [stage, s] of Object.entries(stages))
      if (stage !== '_total') sumStages({ [stage]: s }, (out[stage] ??= emptyUsage()));
  };
  if (tokenSummary) add(tokenSummary);
  else for (const r of records) if (r.tokens) add(r.tokens);
  return out;
}
