/**
 * The index of a rollout directory's `results.jsonl`: one row per result line (id, task type,
 * outcome, scores, short excerpts) with where the line is in the file, so that one result is
 * read again alone. A file is indexed once and then read only where it grew; the indexes are
 * shared by every request, the least recently used dropped first.
 */
import fs from 'node:fs';
import { RolloutResultSchema, type RolloutResult } from '../../run/records.ts';
import { JsonlTail } from '../files/file-cache.ts';
import { openInside, readAt } from '../files/safe-path.ts';

export type Outcome = 'pass' | 'fail' | 'error';

/** Where a result line is in results.jsonl, to read it again alone. */
export interface LineAt {
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
  /** '' when the result has no task type. */
  type: string;
  sample?: number;
  task?: string;
  predicted?: string;
  expected?: string;
  fail_reason?: string;
  error?: string;
}

function clip(text: string | undefined, max: number): string | undefined {
  return text !== undefined && text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Pass means a hard score above zero (as the original's comparisons count it); errors are not scored. */
export function outcomeOf(r: Pick<RolloutResult, 'hard' | 'error'>): Outcome {
  if (r.error) return 'error';
  return r.hard > 0 ? 'pass' : 'fail';
}

/** A value shown as text: a list of answers one after the other, anything else not a string as JSON. */
function asText(v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.join(' | ');
  return JSON.stringify(v);
}

/**
 * The expected answer, under the name each environment gives it: ours `expected`; of the
 * original's environments, SearchQA `gold_answers` (a list), DocVQA `gold_answer`, OfficeQA
 * `ground_truth`, LiveMathematicianBench `correct_label` and `correct_text`.
 */
export function expectedOf(r: RolloutResult): string | undefined {
  const x = r as Record<string, unknown>;
  const mcq = asText(x.correct_label) && [asText(x.correct_label), asText(x.correct_text)].filter(Boolean).join('. ');
  return (
    asText(r.expected) ??
    asText(x.gold_answers) ??
    asText(x.gold_answer) ??
    asText(x.ground_truth) ??
    mcq ??
    asText(x.reference_answer)
  );
}

/** The task type; '' when the result has none (the original's SearchQA writes none). */
export function typeOf(r: RolloutResult): string {
  const t = r.task_type ?? (r as Record<string, unknown>).instruction_type;
  return typeof t === 'string' ? t : '';
}

/** The `type` filter value that selects the results without a task type. */
export const NO_TYPE = '-';

function toRow(r: RolloutResult, n: number): TrajectoryRow {
  const x = r as Record<string, unknown>;
  return {
    n,
    id: r.id,
    outcome: outcomeOf(r),
    hard: r.hard,
    soft: r.soft,
    type: typeOf(r),
    sample: r.sample,
    task: clip(asText(r.task ?? x.question ?? x.task_description), 240),
    predicted: clip(asText(r.predicted_answer ?? x.answer), 160),
    expected: clip(expectedOf(r), 160),
    fail_reason: clip(asText(r.fail_reason), 240),
    error: r.error ? `${r.error.kind}: ${r.error.message}` : undefined,
  };
}

/** The index of one results.jsonl. */
export class ResultsIndex {
  private readonly rows: TrajectoryRow[] = [];
  /** Parallel to rows. */
  readonly lines: LineAt[] = [];
  private readonly tail: JsonlTail<{ r: RolloutResult; at: LineAt }>;

  constructor(
    readonly base: string,
    readonly file: string,
  ) {
    this.tail = new JsonlTail(
      base,
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
    const open = openInside(this.base, this.file);
    if (!open) return undefined;
    let buf: Buffer;
    try {
      buf = readAt(open.fd, at.length, at.offset);
    } finally {
      fs.closeSync(open.fd);
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

  /** Why the file is not read (outside the run directory, not a regular file), when it is not. */
  get problem(): string | undefined {
    return this.tail.problem;
  }

  /** While a large file is still being indexed: how far. */
  get reading(): string | undefined {
    return this.tail.reading;
  }

  /** Length in bytes of the `n`th result line. */
  lineBytes(n: number): number | undefined {
    return this.lines[n]?.length;
  }
}

/** Indexes shared by every request, one per results.jsonl, the least recently used dropped first. */
const indexes = new Map<string, ResultsIndex>();
const MAX_INDEXES = 64;

export function indexOf(base: string, file: string): ResultsIndex {
  const key = `${base}\0${file}`;
  let idx = indexes.get(key);
  if (idx) indexes.delete(key);
  else idx = new ResultsIndex(base, file);
  indexes.set(key, idx);
  if (indexes.size > MAX_INDEXES) indexes.delete(indexes.keys().next().value!);
  return idx;
}

/** The rows of a results.jsonl of the run in `base` (none when it is missing or refused). */
export function resultRows(base: string, file: string): TrajectoryRow[] {
  return indexOf(base, file).all();
}
