/**
 * Reading run files as they grow, without reading them again when they have not changed:
 * JSON files are parsed once per version (size, mtime, inode), and JSONL files are read
 * incrementally from where the last read stopped. Every file is opened through `openInside`
 * (safe-path.ts): inside its run directory, a regular file, never blocking.
 */
import fs from 'node:fs';
import type { ZodType } from 'zod';
import { HttpError, openInside, readInside } from './safe-path.ts';

/** A JSON file larger than this is not parsed (a step history of thousands of steps is a few MB). */
export const MAX_JSON_BYTES = 64 << 20;

const mb = (n: number) => `${(n / (1 << 20)).toFixed(1)} MB`;

export type JsonRead<T> =
  | { ok: true; value: T }
  | { ok: false; missing: true }
  | { ok: false; missing: false; error: string };

interface Fingerprint {
  size: number;
  mtimeMs: number;
  ino: number;
}

/** The version of whatever is at `file` (only a cache key: the file is read through `openInside`). */
function fingerprint(file: string): Fingerprint | undefined {
  try {
    const st = fs.statSync(file);
    return { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
  } catch {
    return undefined;
  }
}

const same = (a: Fingerprint, b: Fingerprint) => a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;

/** A JSON file checked against a schema, parsed again only when it changes on disk. */
export class CachedJson<T> {
  private seen?: Fingerprint;
  private result: JsonRead<T> = { ok: false, missing: true };

  constructor(
    /** The run directory (a real path): the file must lie inside it. */
    readonly base: string,
    readonly file: string,
    private readonly schema: ZodType<T>,
    /** What the file should hold, for the error message (e.g. "a list of step records"). */
    private readonly expected: string,
  ) {}

  read(): JsonRead<T> {
    const fp = fingerprint(this.file);
    if (!fp) {
      this.seen = undefined;
      return (this.result = { ok: false, missing: true });
    }
    if (this.seen && same(this.seen, fp)) return this.result;
    this.seen = fp;
    this.result = parseJsonFile(this.base, this.file, this.schema, this.expected);
    return this.result;
  }

  value(): T | undefined {
    const r = this.read();
    return r.ok ? r.value : undefined;
  }

  /** The problem with the file, in words, when it exists but does not read. */
  problem(): string | undefined {
    const r = this.read();
    return !r.ok && !r.missing ? r.error : undefined;
  }
}

export function parseJsonFile<T>(base: string, file: string, schema: ZodType<T>, expected: string): JsonRead<T> {
  let text: string;
  try {
    const read = readInside(base, file, MAX_JSON_BYTES);
    if (!read) return { ok: false, missing: true };
    if (read.truncated)
      return {
        ok: false,
        missing: false,
        error: `${file} is ${mb(read.size)}, more than the ${mb(MAX_JSON_BYTES)} the dashboard reads of a JSON file`,
      };
    text = read.data.toString('utf8');
  } catch (err) {
    if (err instanceof HttpError) return { ok: false, missing: false, error: err.message };
    return { ok: false, missing: false, error: `${file}: cannot read: ${(err as Error).message}` };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const hint = text.trim() === '' ? 'the file is empty' : (err as Error).message;
    return { ok: false, missing: false, error: `${file} is not valid JSON (${hint}); expected ${expected}` };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    return { ok: false, missing: false, error: `${file} is not ${expected}: ${issue?.message ?? 'invalid'}${where}` };
  }
  return { ok: true, value: parsed.data };
}

/** How much of a JSONL file one `refresh()` reads: a large file is read in steps, off the request. */
export const JSONL_STEP_BYTES = 2 << 20;

/**
 * A JSONL file read incrementally: each `refresh()` parses only the bytes appended since the
 * last one, and at most `stepBytes` of them: the rest is read in further steps, each after the
 * server has had a turn to answer other requests, until the tail has caught up (`reading` says
 * how far it is meanwhile). A file that shrank or was replaced is read again from the start. A
 * line that is not yet complete waits for its newline; a complete line that does not parse is
 * counted and skipped.
 */
export class JsonlTail<T> {
  private offset = 0;
  /** The file's size when last looked at, and whether bytes before it are still unread. */
  private size = 0;
  private behind = false;
  private scheduled = false;
  private ino = -1;
  private items: T[] = [];
  bad = 0;
  /** Why the file is not read (a link out of the run directory, a named pipe), when it is not. */
  problem?: string;

  constructor(
    /** The run directory (a real path): the file must lie inside it. */
    readonly base: string,
    readonly file: string,
    /** Turns a parsed line into an item, or undefined to skip it (counted as bad); `at` is where the line is in the file. */
    private readonly accept: (line: unknown, at: { offset: number; length: number }) => T | undefined,
    /** With `fold`, items are handed over and not kept; `reset` says to start over. */
    private readonly fold?: { item: (item: T) => void; reset: () => void },
    private readonly stepBytes = JSONL_STEP_BYTES,
  ) {}

  /** While a large file is still being read: how far, in words ("reading X: 40.0 MB of 183.0 MB so far"). */
  get reading(): string | undefined {
    return this.behind
      ? `reading ${this.file}: ${mb(this.offset)} of ${mb(this.size)} so far; what is shown is complete once it is read`
      : undefined;
  }

  /** The next step of a file not yet read to its end, after the requests waiting now. */
  private continueLater(): void {
    if (this.scheduled || !this.behind) return;
    this.scheduled = true;
    setTimeout(() => {
      this.scheduled = false;
      this.refresh();
    }, 0).unref();
  }

  refresh(): T[] {
    let open;
    try {
      open = openInside(this.base, this.file);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      this.reset();
      this.problem = err.message;
      return this.items;
    }
    this.problem = undefined;
    if (!open) {
      if (this.offset > 0 || this.items.length) this.reset();
      return this.items;
    }
    const { fd, stat: st } = open;
    try {
      if (st.ino !== this.ino || st.size < this.offset) {
        this.reset();
        this.ino = st.ino;
      }
      this.size = st.size;
      if (st.size === this.offset) return this.items;
      const chunk = Buffer.allocUnsafe(1 << 20);
      let carry: Buffer = Buffer.alloc(0);
      let pos = this.offset;
      // A step ends at the first line end after its budget (a line longer than it is read whole).
      const until = this.offset + this.stepBytes;
      while (pos < st.size && (pos < until || carry.length === pos - this.offset)) {
        const n = fs.readSync(fd, chunk, 0, Math.min(chunk.length, st.size - pos), pos);
        if (n <= 0) break;
        const bufStart = pos - carry.length;
        pos += n;
        const buf = carry.length ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
        // A newline byte never occurs inside a multi-byte UTF-8 character: lines are cut on bytes.
        let start = 0;
        for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
          this.consume(buf.toString('utf8', start, nl), bufStart + start, nl - start);
          start = nl + 1;
        }
        carry = Buffer.from(buf.subarray(start));
      }
      // An unfinished last line is read again, whole, next time.
      this.offset = pos - carry.length;
      this.behind = pos < st.size;
    } finally {
      fs.closeSync(fd);
    }
    this.continueLater();
    return this.items;
  }

  /** Bytes read so far (complete lines only). */
  get bytes(): number {
    return this.offset;
  }

  private consume(line: string, offset: number, length: number): void {
    if (!line.trim()) return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      this.bad++;
      return;
    }
    const item = this.accept(raw, { offset, length });
    if (item === undefined) this.bad++;
    else if (this.fold) this.fold.item(item);
    else this.items.push(item);
  }

  private reset(): void {
    this.offset = 0;
    this.size = 0;
    this.behind = false;
    this.ino = -1;
    this.items = [];
    this.bad = 0;
    this.fold?.reset();
  }
}

/**
 * A text file of the run, or undefined when it is missing; larger files are cut with a note.
 * Throws HttpError 403 for a file outside the run directory or not a regular file.
 */
export function readTextCapped(
  base: string,
  file: string,
  maxBytes: number,
): { text: string; truncated: boolean; size: number } | undefined {
  const read = readInside(base, file, maxBytes);
  return read && { text: read.data.toString('utf8'), truncated: read.truncated, size: read.size };
}
