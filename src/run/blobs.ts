/**
 * Content-addressed storage for the long strings of a run's journals: each distinct skill,
 * prompt or long reply is written once, as `blobs/<sha256>`, and journal lines refer to it.
 * Without it every line of `scores.jsonl` repeats the whole skill, and a journal outgrows what
 * can be read back.
 *
 * A journal line with blobs carries `"blobs": {"<JSON pointer>": "<sha256>"}`, and `null`
 * where each long string was. A value made of many short strings (an agent's trace) may be stored
 * whole, as its JSON: its reference is `"json:<sha256>"`. Lines without `blobs` (written before it
 * existed) read as they are.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { scrubSecrets } from '../config/redact.ts';
import { writeFileAtomic } from './atomic.ts';

/** Strings at least this long go to blobs; shorter ones stay in the line. */
export const BLOB_MIN_CHARS = 1024;
/** Blob text kept in memory for reuse (in characters), most recently used first. */
const CACHE_CHARS = 32 * 1024 * 1024;

export class BlobMissingError extends Error {
  override name = 'BlobMissingError';
}

export class BlobStore {
  private readonly written = new Set<string>();
  private readonly cache = new Map<string, string>();
  private cachedChars = 0;

  constructor(readonly dir: string) {}

  /** The blobs directory beside a journal file. */
  static beside(journal: string): BlobStore {
    return new BlobStore(path.join(path.dirname(journal), 'blobs'));
  }

  file(hash: string): string {
    return path.join(this.dir, hash);
  }

  /**
   * Stores `text` (once) and returns its hash. The blob is on disk before the caller refers to it.
   * A key in use is scrubbed before hashing, so the name matches what is on disk.
   */
  put(raw: string): string {
    const text = scrubSecrets(raw);
    const hash = crypto.createHash('sha256').update(text).digest('hex');
    if (this.written.has(hash)) return hash;
    if (!fs.existsSync(this.file(hash))) writeFileAtomic(this.file(hash), text);
    this.written.add(hash);
    this.remember(hash, text);
    return hash;
  }

  get(hash: string): string {
    const hit = this.cache.get(hash);
    if (hit !== undefined) {
      this.cache.delete(hash);
      this.cache.set(hash, hit);
      return hit;
    }
    let text: string;
    try {
      text = fs.readFileSync(this.file(hash), 'utf8');
    } catch (err) {
      throw new BlobMissingError(
        `${this.file(hash)}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : (err as Error).message}`,
      );
    }
    if (crypto.createHash('sha256').update(text).digest('hex') !== hash)
      throw new BlobMissingError(`${this.file(hash)}: damaged (its content does not match its name)`);
    this.remember(hash, text);
    return text;
  }

  private remember(hash: string, text: string): void {
    if (text.length > CACHE_CHARS / 4) return;
    this.cache.set(hash, text);
    this.cachedChars += text.length;
    for (const [k, v] of this.cache) {
      if (this.cachedChars <= CACHE_CHARS) break;
      this.cache.delete(k);
      this.cachedChars -= v.length;
    }
  }
}

const escapeToken = (t: string) => t.replace(/~/g, '~0').replace(/\//g, '~1');
const unescapeToken = (t: string) => t.replace(/~1/g, '/').replace(/~0/g, '~');

const JSON_REF = 'json:';

/**
 * A copy of `record` whose long strings are in `store`, referenced by JSON pointer in `blobs`.
 * `under` limits this to the strings below one key (the rest of the line stays readable as is);
 * a value under a key named in `whole` goes to one blob as its JSON when that is long.
 */
export function toJournalLine(
  record: object,
  store: BlobStore,
  under = '',
  whole: readonly string[] = [],
): Record<string, unknown> {
  const refs: Record<string, string> = {};
  const walk = (value: unknown, pointer: string): unknown => {
    if (typeof value === 'string') {
      if (value.length < BLOB_MIN_CHARS || !pointer.startsWith(under)) return value;
      refs[pointer] = store.put(value);
      return null;
    }
    if (
      value &&
      typeof value === 'object' &&
      whole.includes(unescapeToken(pointer.slice(pointer.lastIndexOf('/') + 1))) &&
      pointer.startsWith(under)
    ) {
      const json = JSON.stringify(value);
      if (json.length >= BLOB_MIN_CHARS) {
        refs[pointer] = `${JSON_REF}${store.put(json)}`;
        return null;
      }
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, `${pointer}/${i}`));
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = walk(v, `${pointer}/${escapeToken(k)}`);
      return out;
    }
    return value;
  };
  const line = walk(record, '') as Record<string, unknown>;
  return Object.keys(refs).length ? { ...line, blobs: refs } : line;
}

/** The record of a journal line, with its blobs read back. Throws `BlobMissingError` when one is gone. */
export function fromJournalLine<T>(line: Record<string, unknown>, store: BlobStore): T {
  const refs = line.blobs;
  if (!refs || typeof refs !== 'object') return line as T;
  const { blobs: _refs, ...record } = line;
  for (const [pointer, hash] of Object.entries(refs as Record<string, string>)) {
    const tokens = pointer.split('/').slice(1).map(unescapeToken);
    let parent: Record<string, unknown> | unknown[] = record;
    for (const t of tokens.slice(0, -1)) parent = (parent as Record<string, unknown>)[t] as Record<string, unknown>;
    if (!parent || typeof parent !== 'object')
      throw new BlobMissingError(`a reference to blob ${hash} at ${pointer} does not fit the line`);
    (parent as Record<string, unknown>)[tokens.at(-1)!] = hash.startsWith(JSON_REF)
      ? JSON.parse(store.get(hash.slice(JSON_REF.length)))
      : store.get(hash);
  }
  return record as T;
}
