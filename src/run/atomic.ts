/**
 * Atomic file writes: the data goes to a temporary file beside the target, is flushed to
 * disk, then renamed over the target. A reader sees the old file or the new one, never half.
 */
import fs from 'node:fs';
import path from 'node:path';
import { scrubSecrets } from '../config/redact.ts';

let counter = 0;

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
 */
export function writeFileAtomic(file: string, data: string | Uint8Array | Iterable<string | Uint8Array>, options: { durable?: boolean } = {}): void {
  const tmp = `${file}.tmp-${process.pid}-${++counter}`;
  let fd: number | undefined;
  try {
    fd = openCreating(tmp);
    const chunks = typeof data === 'string' || data instanceof Uint8Array ? [data] : data;
    // No key in use reaches a file, whatever the text (a provider may echo one).
    for (const chunk of chunks) {
      if (typeof chunk === 'string') fs.writeSync(fd, scrubSecrets(chunk));
      else fs.writeSync(fd, chunk);
    }
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

/**
 * An append-only JSONL file kept open: one write per line. Each line is one `write` in append
 * mode, so a crash leaves at most a torn last line (which readers skip).
 */
export class AppendFile {
  private fd: number | undefined;

  constructor(readonly file: string) {}

  append(line: string): void {
    if (this.fd === undefined) {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      this.fd = fs.openSync(this.file, 'a+');
      // A line torn by a crash is ended first, so that the next record starts on a line of its own.
      const size = fs.fstatSync(this.fd).size;
      if (size > 0) {
        const last = Buffer.alloc(1);
        fs.readSync(this.fd, last, 0, 1, size - 1);
        if (last[0] !== 0x0a) fs.writeSync(this.fd, '\n');
      }
    }
    fs.writeSync(this.fd, `${scrubSecrets(line)}\n`);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

/** Appends one line to a file (for occasional appends; see AppendFile for streams of lines). */
export function appendLine(file: string, line: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(file, `${scrubSecrets(line)}\n`);
}

/** The complete lines of a JSONL file (a torn last line, from a crash, is ignored). */
export function readJsonLines<T = unknown>(file: string): T[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: T[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // only a torn final line can fail to parse; skip it
    }
  }
  return out;
}
