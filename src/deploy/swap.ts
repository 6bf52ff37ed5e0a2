/**
 * A skill folder replaced as one unit, whatever happens to the process.
 *
 * A deployment stages the new folder in its journal entry (`NNNN/new/`), records it, then swaps
 * with two renames: the folder there goes to `NNNN/previous/`, the staged one takes its place
 * (the commit point). A rollback swaps back the same way, the deployed folder moved aside to
 * `NNNN/removed/` first. A marker (`swap.json` in the skill's journal) says which swap is under
 * way; a process killed midway leaves it, and the next deploy, rollback or status finishes the
 * swap when it had committed, else undoes it. Between the two renames the skill folder is absent
 * for an instant; a kill there leaves it absent until that next command puts it back.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../errors.ts';
import { readJson, writeJsonAtomic } from '../run/atomic.ts';
import { syncDir, syncTree } from '../util/fsync.ts';
import type { PackageEntry } from './journal.ts';

/** In an entry: the folder staged by a deployment, the one it replaced, the one a rollback took out. */
const NEW = 'new';
export const PREVIOUS = 'previous';
const REMOVED = 'removed';
const MARKER = 'swap.json';
/** An entry on its way out: renamed first, so that it stops being an entry at once. */
const DISCARDED = /^\.discarded-\d{4,}$/;

const SwapSchema = z.object({
  op: z.enum(['deploy', 'rollback']),
  entry: z.string().regex(/^\d{4,}$/),
  /** A deployment stages its folder before it touches the skill's; a rollback stages nothing. */
  phase: z.enum(['staging', 'swapping']),
  /** The skill's folder existed when the swap began. */
  had_live: z.boolean(),
  /** A rollback: the entry keeps a folder to put back. */
  has_previous: z.boolean(),
  /** A deployment: the outermost folder it created above the skill's (removed when undone, if empty). */
  created_dir: z.string().optional(),
});
type Swap = z.infer<typeof SwapSchema>;

/** Whether anything is at `p` (a dangling link too). */
export const pathExists = (p: string) => {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

function mark(journal: string, swap: Swap): void {
  writeJsonAtomic(path.join(journal, MARKER), swap);
  syncDir(journal);
}

function unmark(journal: string): void {
  fs.rmSync(path.join(journal, MARKER), { force: true });
  syncDir(journal);
}

function move(from: string, to: string): void {
  fs.renameSync(from, to);
  syncDir(path.dirname(from));
  if (path.dirname(to) !== path.dirname(from)) syncDir(path.dirname(to));
}

/** Renames the entry out of the journal's numbered list, then removes it. */
function discard(entryDir: string): void {
  const away = path.join(path.dirname(entryDir), `.discarded-${path.basename(entryDir)}`);
  if (pathExists(entryDir)) move(entryDir, away);
  fs.rmSync(away, { recursive: true, force: true });
}

/** The swap a killed process left in this journal, if any. */
export function pendingSwap(journal: string): Swap | undefined {
  const file = path.join(journal, MARKER);
  const raw = readJson(file);
  if (raw === undefined) return undefined;
  const parsed = SwapSchema.safeParse(raw);
  if (!parsed.success)
    throw new UserError(
      `${file}: an unreadable record of an interrupted deployment; check the skill's folder and the entries beside it, then remove it`,
    );
  return parsed.data;
}

/**
 * Deploys a folder: `stage(dir)` writes it into the new entry `entryDir`, `entry` is its
 * record; then the swap. `liveDir` must not change meanwhile (the caller holds the skill's lock).
 */
export function swapIn(
  journal: string,
  liveDir: string,
  entryDir: string,
  entry: PackageEntry,
  stage: (dir: string) => void,
): void {
  const base = { op: 'deploy', entry: path.basename(entryDir), has_previous: false } as const;
  const created = entry.created_dir ? { created_dir: entry.created_dir } : {};
  mark(journal, { ...base, phase: 'staging', had_live: entry.previous, ...created });
  fs.mkdirSync(entryDir);
  const staged = path.join(entryDir, NEW);
  stage(staged);
  syncTree(staged);
  writeJsonAtomic(path.join(entryDir, 'deploy.json'), entry);
  mark(journal, { ...base, phase: 'swapping', had_live: entry.previous, ...created });
  if (entry.previous) move(liveDir, path.join(entryDir, PREVIOUS));
  move(staged, liveDir);
  unmark(journal);
}

/**
 * Rolls a package deployment back: the deployed folder out (when it is there), the previous one
 * back in (when there was one), the entry removed.
 */
export function swapOut(journal: string, liveDir: string, entryDir: string, hasPrevious: boolean): void {
  const hadLive = pathExists(liveDir);
  mark(journal, {
    op: 'rollback',
    entry: path.basename(entryDir),
    phase: 'swapping',
    had_live: hadLive,
    has_previous: hasPrevious,
  });
  if (hadLive) move(liveDir, path.join(entryDir, REMOVED));
  if (hasPrevious) move(path.join(entryDir, PREVIOUS), liveDir);
  discard(entryDir);
  unmark(journal);
}

export interface Recovered {
  outcome: 'undone' | 'completed';
  op: Swap['op'];
  /** An undone deployment: the outermost folder it had created above the skill's. */
  createdDir?: string;
}

/** A temporary file of an atomic write a killed process left, among the journal's own files. */
const LEFT_TEMP = /^(swap\.json|deploy\.json|previous)\.tmp-\d+-[0-9a-f]+$/;

/** Removes what killed processes left in the journal: entries on their way out, temporary files of its records. */
function removeLeftovers(journal: string): void {
  const names = fs.existsSync(journal) ? fs.readdirSync(journal) : [];
  for (const name of names) {
    const full = path.join(journal, name);
    if (DISCARDED.test(name) || LEFT_TEMP.test(name)) fs.rmSync(full, { recursive: true, force: true });
    else if (/^\d{4,}$/.test(name))
      for (const inner of fs.readdirSync(full))
        if (LEFT_TEMP.test(inner)) fs.rmSync(path.join(full, inner), { force: true });
  }
}

/** Finishes or undoes the swap a killed process left (the caller holds the skill's lock). */
export function recoverSwap(journal: string, liveDir: string): Recovered | undefined {
  removeLeftovers(journal);
  const swap = pendingSwap(journal);
  if (!swap) return undefined;
  const entryDir = path.join(journal, swap.entry);
  const putBack = (from: string) => {
    if (!pathExists(from)) return;
    if (pathExists(liveDir))
      throw new UserError(
        `an interrupted deployment could not be undone: ${liveDir} was made since; the folder that was there is kept in ${from} (move one of them away, then run the command again)`,
      );
    move(from, liveDir);
  };
  if (swap.op === 'deploy') {
    // The staged folder is gone only once it has become the skill's folder.
    if (swap.phase === 'staging' || pathExists(path.join(entryDir, NEW))) {
      if (swap.phase === 'swapping') putBack(path.join(entryDir, PREVIOUS));
      discard(entryDir);
      unmark(journal);
      return { outcome: 'undone', op: swap.op, ...(swap.created_dir ? { createdDir: swap.created_dir } : {}) };
    }
    unmark(journal);
    return { outcome: 'completed', op: swap.op };
  }
  const committed = swap.has_previous
    ? !pathExists(path.join(entryDir, PREVIOUS))
    : !swap.had_live || !pathExists(liveDir) || pathExists(path.join(entryDir, REMOVED));
  if (!committed) {
    putBack(path.join(entryDir, REMOVED));
    unmark(journal);
    return { outcome: 'undone', op: swap.op };
  }
  discard(entryDir);
  unmark(journal);
  return { outcome: 'completed', op: swap.op };
}
