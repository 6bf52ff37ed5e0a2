/**
 * One step of a run: its record, the gate's decision, and the fate of every edit: selected and
 * applied, selected but skipped (with the reason the apply report gives), merged but left out
 * by the learning-rate budget, and, when the gate rejected the candidate, the scores that
 * rejected it.
 */
import { z } from 'zod';
import type { HistoryRecord } from '../../run/records.ts';
import { decisionOf, type Decision } from './decision.ts';
import { parseJsonFile } from '../files/file-cache.ts';
import type { RunReader } from './run-reader.ts';
import { isFileInside, listInside } from '../files/safe-path.ts';
import { currentBefore } from './skills.ts';
import { listRolloutDirs, type RolloutDirInfo } from './trajectories.ts';
import { type PackageTree, packageTree } from './package-view.ts';

const AnyObject = z.record(z.string(), z.unknown());
const ApplyRowSchema = z
  .object({
    index: z.number(),
    op: z.string().default(''),
    target: z.string().default(''),
    content_preview: z.string().default(''),
    status: z.string(),
    match: z.string().optional(),
    reason: z.string().optional(),
    error: z.string().optional(),
  })
  .loose();
type ApplyRow = z.infer<typeof ApplyRowSchema>;

export interface EditView {
  /** 1-based rank. */
  index: number;
  op: string;
  target?: string;
  content?: string;
  /** For rewrite modes: a suggestion's title and instruction, a candidate's change summary. */
  title?: string;
  support_count?: number;
  source_type?: string;
  status: string;
  applied: boolean;
  match?: string;
  reason?: string;
}

export interface StepView {
  step: number;
  record?: HistoryRecord;
  /** The audit of the candidate before the gate (`audit.json`: each check's verdict and evidence). */
  audit?: {
    verdict: string;
    checks: { check: string; verdict: string; summary: string; findings: Record<string, unknown>[] }[];
  };
  /** The skill the candidate is compared with by default, and the candidate. */
  diff?: { a: string; b: string };
  /**
   * The gate's decision. `before` / `bestBefore`: the current and best scores it compared the
   * candidate with (from the event log, else the previous step's record); `current` / `best`:
   * the scores after it.
   */
  gate?: {
    action: string;
    decision: Decision;
    metric?: string;
    candidate?: number | null;
    /** When the gate stopped early (a reject was certain): the most the candidate could have scored. */
    atMost?: number;
    before?: number | null;
    bestBefore?: number | null;
    current?: number | null;
    best?: number | null;
    used?: number;
    saved?: number;
    /** The paired gate's test (`evaluation.gate: paired`). */
    test?: NonNullable<NonNullable<HistoryRecord['gate']>['test']>;
    /** With a candidate pool: the member the step improved, and the merge tried after it. */
    pool?: HistoryRecord['pool'];
  };
  reasoning?: string;
  edits: EditView[];
  /** Merged edits that the ranking left out (beyond the step's edit budget). */
  notSelected: EditView[];
  /** `scoreAfterAtMost` instead of `scoreAfter` when the gate stopped early. */
  rejected?: { scoreBefore?: number; scoreAfter?: number; scoreAfterAtMost?: number; edits: Record<string, unknown>[] };
  failurePatterns: { pattern: string; count: number; task_ids?: string[] }[];
  /** A package's candidate against the skill it started from, file by file, with the rollouts' read counts. */
  package?: PackageTree;
  rollouts: RolloutDirInfo[];
  files: string[];
  problems: string[];
}

/** The list of update items in a patch file: `edits`, `revise_suggestions`, `skill_candidates`, or a bare list. */
function patchItems(value: unknown): { reasoning?: string; items: Record<string, unknown>[] } {
  if (Array.isArray(value))
    return { items: value.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null) };
  if (!value || typeof value !== 'object') return { items: [] };
  const v = value as Record<string, unknown>;
  const list =
    v.edits ?? v.revise_suggestions ?? v.skill_candidates ?? (v.patch as Record<string, unknown> | undefined)?.edits;
  return {
    reasoning: typeof v.reasoning === 'string' ? v.reasoning : undefined,
    items: Array.isArray(list)
      ? list.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null)
      : [],
  };
}

const s = (v: unknown) => (typeof v === 'string' ? v : undefined);
const n = (v: unknown) => (typeof v === 'number' ? v : undefined);

function editKey(e: Record<string, unknown>): string {
  return JSON.stringify([e.op ?? '', e.target ?? '', e.content ?? '', e.title ?? '', e.instruction ?? '']);
}

function toView(item: Record<string, unknown>, index: number, row?: ApplyRow): EditView {
  const changeSummary = Array.isArray(item.change_summary) ? item.change_summary.join('; ') : s(item.change_summary);
  const view: EditView = {
    index,
    op: s(item.op) ?? s(item.type) ?? (item.new_skill !== undefined ? 'rewrite' : 'append'),
    target: s(item.target),
    content: s(item.content) ?? s(item.instruction) ?? changeSummary,
    title: s(item.title),
    support_count: n(item.support_count),
    source_type: s(item.source_type),
    status: row?.status ?? 'selected',
    applied: row ? row.status.startsWith('applied') : false,
    match: row?.match,
    reason: row?.reason ?? row?.error,
  };
  if (!row) delete view.match;
  return view;
}

function packagePart(
  reader: RunReader,
  diff: { a: string; b: string } | undefined,
  record: HistoryRecord | undefined,
  problems: string[],
): { package?: PackageTree } {
  if (!diff) return {};
  try {
    const tree = packageTree(reader.run, diff.a, diff.b, record?.package_usage);
    return tree ? { package: tree } : {};
  } catch (err) {
    problems.push(`the package files cannot be listed: ${(err as Error).message}`);
    return {};
  }
}

export function stepView(reader: RunReader, step: number): StepView {
  const run = reader.run;
  const problems: string[] = [];
  const read = (name: string, schema: z.ZodType, expected: string) => {
    const r = parseJsonFile(run.root, run.step(step, name), schema, expected);
    if (r.ok) return r.value;
    if (!r.missing) problems.push(r.error);
    return undefined;
  };

  // step_record.json also has the wall-clock times that our history.json leaves out.
  const fromFile = read('step_record.json', AnyObject, 'a step record') as HistoryRecord | undefined;
  const fromHistory = reader.record(step);
  let record = fromHistory ?? (fromFile && typeof fromFile.step === 'number' ? fromFile : undefined);
  if (record && fromHistory && fromFile)
    record = {
      ...fromHistory,
      timing: fromHistory.timing ?? fromFile.timing,
      wall_time_s: fromHistory.wall_time_s ?? fromFile.wall_time_s,
    };
  // None when the step has not started, or never wrote anything.
  const files = listInside(run.root, run.step(step))
    .map((e) => e.name)
    .sort();

  const ranked = patchItems(read('ranked_edits.json', z.unknown(), 'the ranked edits'));
  const merged = patchItems(read('merged_patch.json', z.unknown(), 'the merged patch'));
  const report = read(
    'edit_apply_report.json',
    z.array(ApplyRowSchema),
    'a list of apply-report rows (index, op, target, status)',
  ) as ApplyRow[] | undefined;
  const rowByIndex = new Map((report ?? []).map((r) => [r.index, r]));
  const edits = ranked.items.map((item, i) => toView(item, i + 1, rowByIndex.get(i + 1)));
  const rankedKeys = new Set(ranked.items.map(editKey));
  const notSelected = ranked.items.length
    ? merged.items
        .filter((m) => !rankedKeys.has(editKey(m)))
        .map((m, i) => ({
          ...toView(m, i + 1),
          status: 'not_selected',
          reason: `beyond the step's edit budget${record?.edit_budget != null ? ` (${record.edit_budget})` : ''}`,
        }))
    : [];

  const digest = read('trajectory_digest.json', AnyObject, 'a trajectory digest') as
    | Record<string, unknown>
    | undefined;
  const rejectedEdits = Array.isArray(digest?.rejected_edits)
    ? (digest.rejected_edits as Record<string, unknown>[])
    : undefined;
  const failurePatterns = Array.isArray(digest?.failure_patterns)
    ? (digest.failure_patterns as StepView['failurePatterns'])
    : [];

  const candidate = isFileInside(run.root, run.step(step, 'candidate_skill.md')) ? `cand:${step}` : undefined;
  const decided = reader.gateEvent(step);
  const previous = reader
    .history()
    .records.filter((r) => r.step < step)
    .at(-1);
  // With a candidate pool the step improved a member, not necessarily the current skill.
  const base = record?.pool ? `pool:${record.pool.parent}` : currentBefore(run, step);
  return {
    step,
    record,
    diff: candidate && base ? { a: base, b: candidate } : undefined,
    gate: record
      ? {
          action: record.action,
          decision: decisionOf(record.action),
          metric: record.gate_metric,
          candidate: record.candidate_gate_score,
          // A gate that stopped early knows only the most the candidate could have scored.
          atMost: n((record as Record<string, unknown>).candidate_gate_upper_bound),
          before:
            decided?.current_score ?? previous?.current_score ?? (step === 1 ? reader.baselineSelection() : undefined),
          bestBefore:
            decided?.best_score ?? previous?.best_score ?? (step === 1 ? reader.baselineSelection() : undefined),
          current: record.current_score,
          best: record.best_score,
          used: record.gate?.rollouts_used,
          saved: record.gate?.rollouts_saved,
          test: record.gate?.test,
          pool: record.pool,
        }
      : undefined,
    reasoning: ranked.reasoning ?? merged.reasoning,
    edits,
    notSelected,
    rejected: rejectedEdits
      ? {
          scoreBefore: n(digest?.score_before),
          scoreAfter: n(digest?.score_after),
          scoreAfterAtMost: n(digest?.score_after_at_most),
          edits: rejectedEdits,
        }
      : undefined,
    failurePatterns,
    audit: read('audit.json', AnyObject, 'an audit report (verdict, checks)') as StepView['audit'],
    ...packagePart(reader, candidate && base ? { a: base, b: candidate } : undefined, record, problems),
    rollouts: listRolloutDirs(run, step),
    files,
    problems,
  };
}
