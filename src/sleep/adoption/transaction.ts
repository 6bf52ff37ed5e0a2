/**
 * A set of live files changed all together or not at all, whatever happens to the process.
 *
 * Before a file is touched, a journal records each file's bytes as they are (and its mode), the
 * hash of the bytes it will get (and its mode, when that changes too), and the folders the change
 * will create. Then backups are written, each file is replaced atomically (a temporary file
 * renamed over it), and the caller's commit record (the receipt) is written: that is the commit
 * point. The journal is deleted last.
 *
 * A process killed before the commit point leaves the journal behind; the next transaction (or
 * `recover`) puts every file back to its recorded bytes, removes the backups and folders the
 * change created, and deletes the journal. Killed after it, the journal is only deleted. A file
 * changed by someone else in between (neither its old nor its new bytes) is never overwritten:
 * the journal stays, and the error says which file.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../../errors.ts';
import { readJson, writeFileAtomic, writeJsonAtomic } from '../../run/atomic.ts';
import { syncDir } from '../../util/fsync.ts';

export const sha256Bytes = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

export interface FileChange {
  /** What the file is, for messages (a skill's name, CLAUDE.md). */
  name: string;
  path: string;
  /** Its bytes now (null: it does not exist). */
  before: Buffer | null;
  /** Its bytes after the change (null: removed). */
  after: Buffer | null;
  /** Its mode after the change (default: the mode it has, else 0644). */
  mode?: number;
  /** Where a copy of `before` is kept (none when the file did not exist). */
  backup?: string;
  /** Folders to remove, when empty, once the file is removed (those its creation made), innermost last. */
  removeDirs?: string[];
}

const JournalSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  kind: z.string(),
  /** The file the commit writes; the transaction committed when it holds the id. */
  receipt: z.string(),
  targets: z.array(
    z.object({
      name: z.string(),
      path: z.string(),
      before_b64: z.string().nullable(),
      before_sha256: z.string(),
      before_mode: z.number().nullable(),
      after_sha256: z.string(),
      /** The mode it gets (absent: the one it had). */
      after_mode: z.number().optional(),
      backup: z.string().optional(),
      created_dirs: z.array(z.string()),
    }),
  ),
});
type Journal = z.infer<typeof JournalSchema>;

/** The current bytes of a file (null when it does not exist). A link or a folder is refused. */
export function readLive(file: string): Buffer | null {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (st.isSymbolicLink())
    throw new UserError(
      `${file} is a symbolic link: Sleep changes only regular files (point the config at the file itself)`,
    );
  if (!st.isFile()) throw new UserError(`${file} is not a regular file`);
  return fs.readFileSync(file);
}

/** The real path a file would have: its folder's real path (of the nearest existing one) and its name. */
export function realPathOf(file: string): string {
  const abs = path.resolve(file);
  const rest: string[] = [];
  for (let d = abs; ; d = path.dirname(d)) {
    try {
      return path.join(fs.realpathSync.native(d), ...rest.reverse());
    } catch {
      if (path.dirname(d) === d) return abs;
      rest.push(path.basename(d));
    }
  }
}

const hashOf = (b: Buffer | null) => (b === null ? '' : sha256Bytes(b));

/** The folders between `file` and its nearest existing ancestor, outermost first. */
export function missingDirs(file: string): string[] {
  const out: string[] = [];
  for (let d = path.dirname(file); !fs.existsSync(d); d = path.dirname(d)) {
    out.unshift(d);
    if (path.dirname(d) === d) break;
  }
  return out;
}

function put(file: string, bytes: Buffer | null, mode: number | null): void {
  if (bytes === null) {
    fs.rmSync(file, { force: true });
  } else {
    writeFileAtomic(file, bytes, { mode: mode ?? 0o644 });
  }
  syncDir(path.dirname(file));
}

/** Temporary files a killed process left beside `file` while writing it (the atomic writes' names). */
function removeLeftovers(file: string): void {
  const prefix = `${path.basename(file)}.tmp-`;
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(file));
  } catch {
    return;
  }
  for (const n of names)
    if (n.startsWith(prefix) && /\.tmp-\d+-[0-9a-f]+$/.test(n))
      fs.rmSync(path.join(path.dirname(file), n), { force: true });
}

/** Removes the folders that are empty, innermost (last) first. */
function removeEmpty(dirs: string[]): void {
  for (const d of [...dirs].reverse()) {
    try {
      fs.rmdirSync(d);
    } catch {
      // not empty (or gone): it stays
    }
  }
}

/** A backup: written once (never over an existing file), flushed to disk. */
function writeOnce(file: string, bytes: Buffer): void {
  const fd = fs.openSync(file, 'wx', 0o600);
  try {
    fs.writeSync(fd, bytes);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Puts every file of an unfinished transaction back, removes what it created, deletes its journal. */
function rollBack(journalFile: string, journal: Journal): void {
  const conflicts: string[] = [];
  for (const t of [...journal.targets].reverse()) {
    const now = readLive(t.path);
    const hash = hashOf(now);
    const mode = now === null ? null : fs.statSync(t.path).mode & 0o7777;
    if (hash === t.before_sha256 && mode === t.before_mode) continue;
    if (hash !== t.after_sha256 && hash !== t.before_sha256) {
      conflicts.push(`${t.path} (${t.name})`);
      continue;
    }
    put(t.path, t.before_b64 === null ? null : Buffer.from(t.before_b64, 'base64'), t.before_mode);
  }
  if (conflicts.length) {
    throw new UserError(
      `an interrupted change could not be undone: ${conflicts.join(', ')} changed since (the journal ${journalFile} keeps the original bytes; restore or remove the file, then run the command again)`,
    );
  }
  for (const t of journal.targets) {
    removeLeftovers(t.path);
    if (t.backup) fs.rmSync(t.backup, { force: true });
    removeEmpty(t.created_dirs);
  }
  removeLeftovers(journal.receipt);
  fs.rmSync(journalFile, { force: true });
  removeLeftovers(journalFile);
  syncDir(path.dirname(journalFile));
}

function committed(journal: Journal): boolean {
  try {
    return fs.readFileSync(journal.receipt, 'utf8').includes(journal.id);
  } catch {
    return false;
  }
}

/**
 * Finishes what a killed transaction left: undone when it had not committed, else only its
 * journal removed. Returns what happened, or undefined when there was nothing to do.
 */
export function recover(journalFile: string): 'undone' | 'completed' | undefined {
  let raw: unknown;
  try {
    raw = readJson(journalFile);
  } catch {
    raw = null;
  }
  if (raw === undefined) return undefined;
  // The journal is written atomically: an unreadable one was damaged by something else.
  const parsed = JournalSchema.safeParse(raw);
  if (!parsed.success)
    throw new UserError(
      `${journalFile}: an unreadable journal of an interrupted change; check the files it names, then remove it`,
    );
  if (committed(parsed.data)) {
    for (const t of parsed.data.targets) removeLeftovers(t.path);
    fs.rmSync(journalFile, { force: true });
    removeLeftovers(journalFile);
    return 'completed';
  }
  rollBack(journalFile, parsed.data);
  return 'undone';
}

/**
 * Applies `changes` as one transaction; `commit(id)` writes `receipt` with the id in it (the
 * commit point). Each file must still hold `before` when its turn comes: a file changed
 * meanwhile aborts the whole transaction, undone.
 */
export function runTransaction(
  journalFile: string,
  kind: string,
  changes: FileChange[],
  receipt: string,
  commit: (id: string) => void,
): void {
  const id = `${kind}-${new Date().toISOString()}-${randomBytes(4).toString('hex')}`;
  const journal: Journal = {
    version: 1,
    id,
    kind,
    receipt,
    targets: changes.map((c) => ({
      name: c.name,
      path: c.path,
      before_b64: c.before === null ? null : c.before.toString('base64'),
      before_sha256: hashOf(c.before),
      before_mode: c.before === null ? null : fs.statSync(c.path).mode & 0o7777,
      after_sha256: hashOf(c.after),
      ...(c.mode !== undefined ? { after_mode: c.mode } : {}),
      ...(c.backup && c.before !== null ? { backup: c.backup } : {}),
      created_dirs: [...missingDirs(c.path), ...(c.backup && c.before !== null ? missingDirs(c.backup) : [])],
    })),
  };
  if (fs.existsSync(journalFile))
    throw new UserError(`${journalFile}: another change is unfinished; run the command again to recover it first`);
  writeJsonAtomic(journalFile, journal);
  syncDir(path.dirname(journalFile));
  try {
    for (const [i, c] of changes.entries()) {
      if (c.backup && c.before !== null) {
        fs.mkdirSync(path.dirname(c.backup), { recursive: true });
        writeOnce(c.backup, c.before);
      }
      const now = readLive(c.path);
      if (hashOf(now) !== journal.targets[i]!.before_sha256)
        throw new UserError(`${c.path} (${c.name}) changed while it was being replaced; nothing was changed`);
      fs.mkdirSync(path.dirname(c.path), { recursive: true });
      put(c.path, c.after, journal.targets[i]!.after_mode ?? journal.targets[i]!.before_mode);
      if (c.after === null) removeEmpty(c.removeDirs ?? []);
    }
    commit(id);
  } catch (err) {
    rollBack(journalFile, journal);
    throw err;
  }
  fs.rmSync(journalFile, { force: true });
  syncDir(path.dirname(journalFile));
}
