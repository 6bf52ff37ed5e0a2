/**
 * Atomic file writes: the data goes to a temporary file beside the target, is flushed to
 * disk, then renamed over the target. A reader sees the old file or the new one, never half.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { scrubSecrets } from '../config/redact.ts';
import { walkFiles } from '../util/walk-files.ts';

/**
 * A temporary name beside `file`: unique across processes even when two share a pid (two
 * containers writing into one mounted directory).
 */
function tempPath(file: string): string {
  return `${file}.tmp-${process.pid}-${crypto.randomBytes(8).toString('hex')}`;
}

/** Our temporary files, and those of earlier versions (`<name>.tmp-<pid>-<counter>`). */
const TEMP_NAME = /\.tmp-\d+-[0-9a-f]+$/;

/**
 * Removes the temporary files that writes killed midway left under `root` (only names of our
 * own pattern). For the owner of the run lock, at start: no other process writes there.
 */
export function removeStaleTempFiles(root: string): string[] {
  // The walk does not follow links; a run folder reached through one is still its own.
  let real: string;
  try {
    real = fs.realpathSync(root);
  } catch {
    return [];
  }
  return walkFiles(real, { file: (name) => TEMP_NAME.test(name) }).map(({ path: file }) => {
    fs.rmSync(file, { force: true });
    return path.join(root, path.relative(real, file));
  });
}

/** Opens a file for writing, creating its directory when it is missing. */
function openCreating(file: string): number {
  try {
    return fs.openSync(file, 'w');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    return fs.openSync(file, 'w');
  }
}

/**
 * `durable: false` skips the flush to disk: still atomic for readers and against a crash of the
 * process, for bulky derived files (per-item trajectories) where a power cut may lose the file.
 * `mode` sets the file's permissions (else the default for a new file).
 */
export function writeFileAtomic(
  file: string,
  data: string | Uint8Array | Iterable<string | Uint8Array>,
  options: { durable?: boolean; mode?: number } = {},
): void {
  const tmp = tempPath(file);
  let fd: number | undefined;
  try {
    fd = openCreating(tmp);
    const chunks = typeof data === 'string' || data instanceof Uint8Array ? [data] : data;
    // No key in use reaches a file, whatever the text (a provider may echo one).
    for (const chunk of chunks) {
      if (typeof chunk === 'string') fs.writeSync(fd, scrubSecrets(chunk));
      else fs.writeSync(fd, chunk);
    }
    if (options.mode !== undefined) fs.fchmodSync(fd, options.mode);
    if (options.durable !== false) fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
  } catch (err) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/** JSON as the original writes it: two-space indent, non-ASCII kept, a final newline. */
export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function writeJsonAtomic(file: string, value: unknown): void {
  writeFileAtomic(file, toJson(value));
}

export function readJson<T = unknown>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/** Where a line of a JSONL file is: its first byte, and its length in bytes (without the newline). */
export class LineAt {
  constructor(
    readonly offset: number,
    readonly bytes: number,
  ) {}
}

/**
 * An append-only JSONL file kept open: one write per line. Each line is one `write` in append
 * mode, so a crash leaves at most a torn last line (which readers skip). Each append says where
 * its line is, so a reader can keep that instead of the line and read it back when needed.
 */
export class AppendFile {
  private fd: number | undefined;
  private readFd: number | undefined;
  /** Bytes in the file: where the next line starts (this process is its only writer). */
  private size = 0;

  constructor(readonly file: string) {}

  append(line: string): LineAt {
    if (this.fd === undefined) {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      this.fd = fs.openSync(this.file, 'a+');
      // A line torn by a crash is ended first, so that the next record starts on a line of its own.
      this.size = fs.fstatSync(this.fd).size;
      if (this.size > 0) {
        const last = Buffer.alloc(1);
        fs.readSync(this.fd, last, 0, 1, this.size - 1);
        if (last[0] !== 0x0a) this.size += fs.writeSync(this.fd, '\n');
      }
    }
    const written = fs.writeSync(this.fd, `${scrubSecrets(line)}\n`);
    const at = new LineAt(this.size, written - 1);
    this.size += written;
    return at;
  }

  /** A line of this file (appended here, or found by `jsonLines`), read back from disk. */
  read(at: LineAt): string {
    this.readFd ??= fs.openSync(this.file, 'r');
    const bytes = Buffer.allocUnsafe(at.bytes);
    const n = fs.readSync(this.readFd, bytes, 0, at.bytes, at.offset);
    if (n !== at.bytes)
      throw new Error(
        `${this.file}: the line at byte ${at.offset} is cut short (${n} of ${at.bytes} bytes): the file changed under the run`,
      );
    return bytes.toString('utf8');
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    if (this.readFd !== undefined) fs.closeSync(this.readFd);
    this.fd = undefined;
    this.readFd = undefined;
  }
}

/** Appends one line to a file (for occasional appends; see AppendFile for streams of lines). */
export function appendLine(file: string, line: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(file, `${scrubSecrets(line)}\n`);
}

/** Longest journal line read; anything longer is refused with its file and line. */
const MAX_LINE_BYTES = 256 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;

/**
 * The lines of a JSONL file, one at a time, read in chunks: a journal is never held in memory
 * whole. Lines that do not parse are skipped: a crash can tear the line being written, and the
 * next writer starts a fresh line after it. Yields each value with its line number (from 1) and
 * its text.
 */
export function* jsonLines<T = unknown>(
  file: string,
  options: { maxLineBytes?: number } = {},
): Generator<{ value: T; line: number; text: string; at: LineAt }> {
  const maxLine = options.maxLineBytes ?? MAX_LINE_BYTES;
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    const chunk = Buffer.alloc(CHUNK_BYTES);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let line = 0;
    /** File offset of the chunk's first byte. */
    let read = 0;
    const parse = (bytes: Buffer, offset: number): { value: T; line: number; text: string; at: LineAt } | undefined => {
      line++;
      if (bytes.length === 0) return undefined;
      const text = bytes.toString('utf8');
      try {
        return { value: JSON.parse(text) as T, line, text, at: new LineAt(offset, bytes.length) };
      } catch {
        return undefined;
      }
    };
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, CHUNK_BYTES, null);
      if (n === 0) break;
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl !== -1 && nl < n; nl = chunk.indexOf(10, start)) {
        const piece = chunk.subarray(start, nl);
        const bytes = pending.length ? Buffer.concat([...pending, piece]) : piece;
        const offset = read + start - pendingBytes;
        pending = [];
        pendingBytes = 0;
        const parsed = parse(bytes, offset);
        if (parsed) yield parsed;
        start = nl + 1;
      }
      if (start < n) {
        pending.push(Buffer.from(chunk.subarray(start, n)));
        pendingBytes += n - start;
        if (pendingBytes > maxLine) {
          throw new Error(
            `${file}: line ${line + 1} is longer than ${maxLine} bytes; the file is damaged or was not written by skillopt`,
          );
        }
      }
      read += n;
    }
    // A last line without its newline: complete if it parses, else torn by a crash.
    if (pending.length) {
      const parsed = parse(Buffer.concat(pending), read - pendingBytes);
      if (parsed) yield parsed;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** The complete lines of a small JSONL file (a torn line, from a crash, is ignored). */
export function readJsonLines<T = unknown>(file: string): T[] {
  const out: T[] = [];
  for (const { value } of jsonLines<T>(file)) out.push(value);
  return out;
}
