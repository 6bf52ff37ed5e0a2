/**
 * Rollouts of a run: the directories that hold them (a step's training batch and selection
 * evaluation, the baseline and test evaluations, the epoch-boundary comparisons), a page of
 * results filtered by outcome and task type, and one trajectory in full (its result line and
 * its conversation). A `results.jsonl` is indexed once and then read only where it grew.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RolloutResultSchema, type RolloutResult } from '../run/records.ts';
import type { RunDir } from '../run/layout.ts';
import { JsonlTail, readTextCapped } from './file-cache.ts';
import { HttpError, resolveInside } from './safe-path.ts';

const MAX_CONVERSATION_BYTES = 8 << 20;
const MAX_PAGE = 200;

export type Outcome = 'pass' | 'fail' | 'error';

export interface RolloutDirInfo {
  /** Relative to the run directory. */
  dir: string;
  label: string;
  count: number;
}

/** Where a result line is in results.jsonl, to read it again alone. */
interface LineAt {
  offset: number;
  length: number;
}

export interface TrajectoryRow {
  /** Position in results.jsonl (several samples of one item share an id). */
  n: number;
  id: string;
  outcome: Outcome;
  hard: number;
  soft: number;
  type: string;
  sample?: number;
  task?: string;
  predicted?: string;
  expected?: string;
  fail_reason?: string;
  error?: string;
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

function clip(v: unknown, max: number): string | undefined {
  if (v === undefined || v === null) return undefined;
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Pass means a hard score above zero (as the original's comparisons count it); errors are not scored. */
export function outcomeOf(r: Pick<RolloutResult, 'hard' | 'error'>): Outcome {
  if (r.error) return 'error';
  return r.hard > 0 ? 'pass' : 'fail';
}

function toRow(r: RolloutResult, n: number): TrajectoryRow {
  return {
    n,
    id: r.id,
    outcome: outcomeOf(r),
    hard: r.hard,
    soft: r.soft,
    type: r.task_type || 'other',
    sample: r.sample,
    task: clip(r.task ?? (r as Record<string, unknown>).question ?? (r as Record<string, unknown>).task_description, 240),
    predicted: clip(r.predicted_answer ?? (r as Record<string, unknown>).answer, 160),
    expected: clip(r.expected ?? (r as Record<string, unknown>).reference_answer, 160),
    fail_reason: clip(r.fail_reason, 240),
    error: r.error ? `${r.error.kind}: ${r.error.message}` : undefined,
  };
}

/** The index of one results.jsonl. */
class ResultsIndex {
  private readonly rows: TrajectoryRow[] = [];
  /** Parallel to rows. */
  readonly lines: LineAt[] = [];
  private readonly tail: JsonlTail<{ r: RolloutResult; at: LineAt }>;

  constructor(readonly file: string) {
    this.tail = new JsonlTail(
      file,
      (line, at) => {
        const p = RolloutResultSchema.safeParse(line);
        return p.success ? { r: p.data, at } : undefined;
      },
      {
        item: ({ r, at }) => {
          this.rows.push(toRow(r, this.rows.length));
          this.lines.push(at);
        },
        reset: () => {
          this.rows.length = 0;
          this.lines.length = 0;
        },
      },
    );
  }

  /** The full result of the `n`th row, read from its place in the file. */
  result(n: number): RolloutResult | undefined {
    this.all();
    const at = this.lines[n];
    if (!at) return undefined;
    const buf = Buffer.alloc(at.length);
    const fd = fs.openSync(this.file, 'r');
    try {
      fs.readSync(fd, buf, 0, at.length, at.offset);
    } finally {
      fs.closeSync(fd);
    }
    try {
      const parsed = RolloutResultSchema.safeParse(JSON.parse(buf.toString('utf8')));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined; // the file changed under the index; the next listing re-reads it
    }
  }

  all(): TrajectoryRow[] {
    this.tail.refresh();
    return this.rows;
  }

  get bad(): number {
    return this.tail.bad;
  }
}

/** Indexes shared by every request, one per results.jsonl, the least recently used dropped first. */
const indexes = new Map<string, ResultsIndex>();
const MAX_INDEXES = 64;

function indexOf(file: string): ResultsIndex {
  let idx = indexes.get(file);
  if (idx) indexes.delete(file);
  else idx = new ResultsIndex(file);
  indexes.set(file, idx);
  if (indexes.size > MAX_INDEXES) indexes.delete(indexes.keys().next().value!);
  return idx;
}

function subdirs(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'predictions')
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

function collect(run: RunDir, rel: string, depth: number, out: RolloutDirInfo[]): void {
  const abs = run.path(rel);
  if (fs.existsSync(path.join(abs, 'results.jsonl'))) {
    const parts = rel.split('/');
    const leaf = parts.at(-1)!;
    const batch = parts.find((p) => /^batch_\d+$/.test(p));
    const epoch = /^(slow_update|meta_skill)$/.test(parts[0]!) ? /^epoch_(\d+)$/.exec(parts[1] ?? '') : null;
    const where = epoch ? `${parts[0] === 'slow_update' ? 'slow update' : 'meta skill'}, epoch ${Number(epoch[1])}: ` : '';
    out.push({ dir: rel, label: `${where}${LABELS[leaf] ?? leaf.replace(/_/g, ' ')}${batch ? ` (${batch.replace('_', ' ')})` : ''}`, count: indexOf(path.join(abs, 'results.jsonl')).all().length });
  }
  if (depth <= 0) return;
  for (const d of subdirs(abs)) if (d !== 'topup') collect(run, `${rel}/${d}`, depth - 1, out);
}

/** Rollout directories of a step, or of the run as a whole (baseline, tests, epoch boundaries). */
export function listRolloutDirs(run: RunDir, step?: number): RolloutDirInfo[] {
  const out: RolloutDirInfo[] = [];
  if (step !== undefined) {
    const rel = path.relative(run.root, run.step(step)).split(path.sep).join('/');
    for (const d of subdirs(run.step(step))) collect(run, `${rel}/${d}`, 2, out);
    return out;
  }
  for (const d of ['selection_eval_baseline', 'test_eval_baseline', 'test_eval', 'test_eval_final', 'final_selection_eval']) collect(run, d, 0, out);
  for (const group of ['slow_update', 'meta_skill']) {
    for (const e of subdirs(run.path(group))) collect(run, `${group}/${e}`, 1, out);
  }
  return out;
}

/** The real path of a rollout directory named in a request; refused unless it lies inside the run. */
function rolloutDir(runReal: string, rel: string): string {
  const dir = resolveInside(runReal, rel, 'dir');
  if (!fs.existsSync(path.join(dir, 'results.jsonl'))) throw new HttpError(404, `no rollouts in ${rel} (it has no results.jsonl)`);
  return dir;
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
}

export function trajectoryPage(runReal: string, rel: string, query: TrajectoryQuery): TrajectoryPage {
  if (query.outcome && !['pass', 'fail', 'error'].includes(query.outcome)) throw new HttpError(400, `outcome must be pass, fail or error, not ${query.outcome}`);
  const dir = rolloutDir(runReal, rel);
  const index = indexOf(path.join(dir, 'results.jsonl'));
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
      (!query.type || r.type === query.type) &&
      (!q || [r.id, r.task, r.predicted, r.expected, r.fail_reason].some((f) => f?.toLowerCase().includes(q))),
  );
  const offset = Math.max(0, query.offset ?? 0);
  const limit = Math.min(MAX_PAGE, Math.max(1, query.limit ?? 50));
  return { dir: rel, total: all.length, matched: matches.length, offset, limit, counts, types, bad: index.bad, rows: matches.slice(offset, offset + limit) };
}

export interface TrajectoryDetail {
  dir: string;
  n: number;
  result: Record<string, unknown>;
  outcome: Outcome;
  /** The parsed conversation.json, or its text when it is not JSON. */
  conversation?: unknown;
  conversationNote?: string;
  /** Other files of the item's prediction directory (prompts, traces), by name. */
  files: string[];
}

/** One trajectory: its full result line (the `n`th of results.jsonl) and its conversation. */
export function trajectoryDetail(runReal: string, rel: string, n: number): TrajectoryDetail {
  const dir = rolloutDir(runReal, rel);
  const result = indexOf(path.join(dir, 'results.jsonl')).result(n);
  if (!result) throw new HttpError(404, `no trajectory number ${n} in ${rel}/results.jsonl`);
  const detail: TrajectoryDetail = { dir: rel, n, result: result as Record<string, unknown>, outcome: outcomeOf(result), files: [] };
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
  try {
    detail.files = fs.readdirSync(predDir).filter((f) => !f.startsWith('.')).sort();
  } catch {
    detail.conversationNote = 'no conversation was saved for this item';
    return detail;
  }
  const conv = readTextCapped(path.join(predDir, 'conversation.json'), MAX_CONVERSATION_BYTES);
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
