/**
 * Rollouts of a run: the directories that hold them (a step's training batch and selection
 * evaluation, the baseline and test evaluations, the epoch-boundary comparisons), a page of
 * results filtered by outcome and task type, and one trajectory in full (its result line and
 * its conversation), through the index of each `results.jsonl` (results-index.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { RunDir } from '../../run/layout.ts';
import { EVALS_DIR } from './evals.ts';
import { readTextCapped } from '../files/file-cache.ts';
import {
  expectedOf,
  indexOf,
  NO_TYPE,
  outcomeOf,
  resultRows,
  type Outcome,
  type ResultsIndex,
  type TrajectoryRow,
  typeOf,
} from './results-index.ts';
import { HttpError, isFileInside, listInside, resolveInside } from '../files/safe-path.ts';

const MAX_CONVERSATION_BYTES = 8 << 20;
/** A result line larger than this is shown with its texts cut, and says so. */
const MAX_RESULT_BYTES = 2 << 20;
const MAX_TEXT_CHARS = 64 << 10;

/** A copy of `v` with every string longer than MAX_TEXT_CHARS cut, marked where it was cut. */
function clipTexts(v: unknown): unknown {
  if (typeof v === 'string')
    return v.length > MAX_TEXT_CHARS
      ? `${v.slice(0, MAX_TEXT_CHARS)}… [${v.length - MAX_TEXT_CHARS} more characters]`
      : v;
  if (Array.isArray(v)) return v.map(clipTexts);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clipTexts(x)]));
  return v;
}
const MAX_PAGE = 200;

export interface RolloutDirInfo {
  /** Relative to the run directory. */
  dir: string;
  label: string;
  count: number;
}

const LABELS: Record<string, string> = {
  rollout: 'training batch',
  selection_eval: 'selection (candidate)',
  selection_eval_baseline: 'selection, initial skill',
  final_selection_eval: 'selection, final skill',
  test_eval_baseline: 'test, initial skill',
  test_eval: 'test, best skill',
  test_eval_final: 'test, final skill',
  rollout_prev: 'previous epoch skill',
  rollout_curr: 'current epoch skill',
};

function subdirs(run: RunDir, dir: string): string[] {
  return listInside(run.root, dir)
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'predictions')
    .map((e) => e.name)
    .sort();
}

function collect(run: RunDir, rel: string, depth: number, out: RolloutDirInfo[]): void {
  const abs = run.path(rel);
  if (isFileInside(run.root, path.join(abs, 'results.jsonl'))) {
    const parts = rel.split('/');
    const leaf = parts.at(-1)!;
    const batch = parts.find((p) => /^batch_\d+$/.test(p));
    const epoch = /^(slow_update|meta_skill)$/.test(parts[0]!) ? /^epoch_(\d+)$/.exec(parts[1] ?? '') : null;
    const where = epoch
      ? `${parts[0] === 'slow_update' ? 'slow update' : 'meta skill'}, epoch ${Number(epoch[1])}: `
      : '';
    // An evaluation's rollouts: evals/<name>/rollouts/<target>/<skill>/repeat_NN.
    const evaluation =
      parts[0] === EVALS_DIR && parts.length === 6
        ? `evaluation ${parts[1]}: ${parts[4]} on ${parts[3]}, ${leaf.replace('_', ' ')}`
        : undefined;
    const label =
      evaluation ?? `${where}${LABELS[leaf] ?? leaf.replace(/_/g, ' ')}${batch ? ` (${batch.replace('_', ' ')})` : ''}`;
    out.push({ dir: rel, label, count: resultRows(run.root, path.join(abs, 'results.jsonl')).length });
  }
  if (depth <= 0) return;
  for (const d of subdirs(run, abs)) if (d !== 'topup') collect(run, `${rel}/${d}`, depth - 1, out);
}

/** Rollout directories of a step, or of the run as a whole (baseline, tests, epoch boundaries). */
export function listRolloutDirs(run: RunDir, step?: number): RolloutDirInfo[] {
  const out: RolloutDirInfo[] = [];
  if (step !== undefined) {
    const rel = path.relative(run.root, run.step(step)).split(path.sep).join('/');
    for (const d of subdirs(run, run.step(step))) collect(run, `${rel}/${d}`, 2, out);
    return out;
  }
  for (const d of [
    'selection_eval_baseline',
    'test_eval_baseline',
    'test_eval',
    'test_eval_final',
    'final_selection_eval',
  ])
    collect(run, d, 0, out);
  for (const group of ['slow_update', 'meta_skill']) {
    for (const e of subdirs(run, run.path(group))) collect(run, `${group}/${e}`, 1, out);
  }
  for (const e of subdirs(run, run.path(EVALS_DIR))) collect(run, `${EVALS_DIR}/${e}/rollouts`, 3, out);
  return out;
}

/** The index of a rollout directory named in a request; refused unless it and its results.jsonl lie inside the run. */
function rolloutIndex(runReal: string, rel: string): ResultsIndex {
  const dir = resolveInside(runReal, rel, 'dir');
  const index = indexOf(runReal, path.join(dir, 'results.jsonl'));
  index.all();
  if (index.problem) throw new HttpError(403, index.problem);
  if (!fs.existsSync(path.join(dir, 'results.jsonl')))
    throw new HttpError(404, `no rollouts in ${rel} (it has no results.jsonl)`);
  return index;
}

export interface TrajectoryQuery {
  outcome?: string;
  type?: string;
  q?: string;
  offset?: number;
  limit?: number;
}

export interface TrajectoryPage {
  dir: string;
  total: number;
  matched: number;
  offset: number;
  limit: number;
  counts: Record<Outcome, number>;
  types: Record<string, number>;
  /** Lines of results.jsonl that are not rollout results. */
  bad: number;
  rows: TrajectoryRow[];
  /** While a large results.jsonl is still being indexed: how far (the rows are those read so far). */
  reading?: string;
}

export function trajectoryPage(runReal: string, rel: string, query: TrajectoryQuery): TrajectoryPage {
  if (query.outcome && !['pass', 'fail', 'error'].includes(query.outcome))
    throw new HttpError(400, `outcome must be pass, fail or error, not ${query.outcome}`);
  const index = rolloutIndex(runReal, rel);
  const all = index.all();
  const counts: Record<Outcome, number> = { pass: 0, fail: 0, error: 0 };
  const types: Record<string, number> = {};
  for (const r of all) {
    counts[r.outcome]++;
    types[r.type] = (types[r.type] ?? 0) + 1;
  }
  const q = query.q?.toLowerCase();
  const matches = all.filter(
    (r) =>
      (!query.outcome || r.outcome === query.outcome) &&
      (!query.type || r.type === (query.type === NO_TYPE ? '' : query.type)) &&
      (!q || [r.id, r.task, r.predicted, r.expected, r.fail_reason].some((f) => f?.toLowerCase().includes(q))),
  );
  const offset = Math.max(0, query.offset ?? 0);
  const limit = Math.min(MAX_PAGE, Math.max(1, query.limit ?? 50));
  return {
    dir: rel,
    total: all.length,
    matched: matches.length,
    offset,
    limit,
    counts,
    types,
    bad: index.bad,
    rows: matches.slice(offset, offset + limit),
    ...(index.reading ? { reading: index.reading } : {}),
  };
}

export interface TrajectoryDetail {
  dir: string;
  n: number;
  result: Record<string, unknown>;
  outcome: Outcome;
  /** The expected answer, whatever the environment calls it. */
  expected?: string;
  /** '' when the result has no task type. */
  type: string;
  /** The parsed conversation.json, or its text when it is not JSON. */
  conversation?: unknown;
  conversationNote?: string;
  /** When the result line is too large to show whole: its size, and that its long texts are cut. */
  resultNote?: string;
  /** Other files of the item's prediction directory (prompts, traces), by name. */
  files: string[];
}

/** One trajectory: its full result line (the `n`th of results.jsonl) and its conversation. */
export function trajectoryDetail(runReal: string, rel: string, n: number): TrajectoryDetail {
  const index = rolloutIndex(runReal, rel);
  const full = index.result(n);
  if (!full) throw new HttpError(404, `no trajectory number ${n} in ${rel}/results.jsonl`);
  const bytes = index.lineBytes(n) ?? 0;
  const tooLarge = bytes > MAX_RESULT_BYTES;
  const result = tooLarge ? (clipTexts(full) as typeof full) : full;
  const detail: TrajectoryDetail = {
    dir: rel,
    n,
    result: result as Record<string, unknown>,
    ...(tooLarge
      ? {
          resultNote: `this result line is ${(bytes / (1 << 20)).toFixed(1)} MB, more than the ${MAX_RESULT_BYTES >> 20} MB shown whole: each text in it is cut to its first ${MAX_TEXT_CHARS >> 10}k characters (the whole line is line ${n + 1} of ${rel}/results.jsonl)`,
        }
      : {}),
    outcome: outcomeOf(result),
    expected: expectedOf(result),
    type: typeOf(result),
    files: [],
  };
  // skillopt keeps the conversation in the result line; the original, in a file per item.
  const inline = (result as { conversation?: unknown }).conversation;
  if (Array.isArray(inline)) {
    detail.conversation = inline;
    return detail;
  }
  let predDir: string;
  try {
    predDir = resolveInside(runReal, `${rel}/predictions/${result.id}`, 'item id');
  } catch {
    detail.conversationNote = `the item id ${JSON.stringify(result.id)} cannot name a directory safely; its conversation is not shown`;
    return detail;
  }
  detail.files = listInside(runReal, predDir)
    .filter((e) => !e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  if (!detail.files.length) {
    detail.conversationNote = 'no conversation was saved for this item';
    return detail;
  }
  let conv;
  try {
    conv = readTextCapped(runReal, path.join(predDir, 'conversation.json'), MAX_CONVERSATION_BYTES);
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    detail.conversationNote = err.message;
    return detail;
  }
  if (!conv) {
    detail.conversationNote = 'no conversation.json for this item';
    return detail;
  }
  if (conv.truncated) {
    detail.conversation = conv.text;
    detail.conversationNote = `conversation.json is ${conv.size} bytes; the first ${MAX_CONVERSATION_BYTES} are shown as text`;
    return detail;
  }
  try {
    detail.conversation = JSON.parse(conv.text);
  } catch {
    detail.conversation = conv.text;
    detail.conversationNote = 'conversation.json is not valid JSON; shown as text';
  }
  return detail;
}
