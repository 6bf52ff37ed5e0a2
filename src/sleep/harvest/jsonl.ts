/**
 * JSON Lines as agents write them while they run: blank lines, a line torn by a write in
 * progress (usually the last), a record from a newer version. Unreadable lines are counted and
 * passed over; the rest are returned in order.
 */
import fs from 'node:fs';

export type JsonRecord = Record<string, unknown>;

export interface Records {
  records: JsonRecord[];
  /** Lines that were not a JSON object. */
  malformed: number;
}

export function parseJsonl(text: string): Records {
  const records: JsonRecord[] = [];
  let malformed = 0;
  for (const raw of text.replace(/^\uFEFF/, '').split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value && typeof value === 'object' && !Array.isArray(value)) records.push(value as JsonRecord);
      else malformed++;
    } catch {
      malformed++;
    }
  }
  return { records, malformed };
}

/**
 * The text of a file up to the size it had when opened, so that an agent still appending to it
 * cannot make the read run on; undefined when it cannot be read.
 */
export function readText(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(size);
    let at = 0;
    while (at < size) {
      const n = fs.readSync(fd, buf, at, size - at, at);
      if (n === 0) break;
      at += n;
    }
    return buf.subarray(0, at).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** A property of an unknown value, if it is an object. */
export function field(value: unknown, key: string): unknown {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as JsonRecord)[key] : undefined;
}

export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
