/**
 * The record of deployments, beside the skills: `.skillopt-deploy/<name>/NNNN/` per deployment
 * of a skill (a hidden folder no agent reads as a skill), each with its `deploy.json` and what it
 * replaced, so that deployments roll back one at a time, newest first. Changes to a skill's
 * record and folder are made under a lock of that skill (`.skillopt-deploy/<name>/run.lock`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../errors.ts';
import { readJson } from '../run/atomic.ts';
import { acquireRunLock } from '../run/lock.ts';

export const JOURNAL = '.skillopt-deploy';

/** The record of one skill's deployments in a skills folder. */
export const journalOf = (folder: string, name: string) => path.join(folder, JOURNAL, name);

/** A deployment of a single document: `SKILL.md` written, the file it replaced kept as `previous`. */
export interface DocumentEntry {
  kind?: undefined;
  file: string;
  run: string;
  time: string;
  /** SHA-256 of the file as deployed: a rollback checks the file is still that. */
  deployed_sha256: string;
  /** The file that was there (kept as `previous` beside this record), or null when there was none. */
  previous: { mode: number } | null;
  /** The outermost folder this deployment created (removed again by its rollback, when empty). */
  created_dir?: string;
}

export const PackageEntrySchema = z.object({
  kind: z.literal('package'),
  /** The skill's folder. */
  dir: z.string(),
  run: z.string(),
  time: z.string(),
  /** Each file as deployed (mode, SHA-256): a redeploy or rollback checks the folder still holds them. */
  deployed: z.record(z.string(), z.object({ mode: z.number().int(), sha256: z.string() })),
  /** Whether a folder was there, kept as `previous/` beside this record. */
  previous: z.boolean(),
  created_dir: z.string().optional(),
});
/** A deployment of a package: the whole folder replaced, the folder that was there kept as `previous/`. */
export type PackageEntry = z.infer<typeof PackageEntrySchema>;
export type Entry = DocumentEntry | PackageEntry;

/** The numbered deployments recorded in a skill's journal, oldest first. */
export function entriesOf(journal: string): string[] {
  try {
    return fs
      .readdirSync(journal)
      .filter((n) => /^\d{4,}$/.test(n))
      .sort();
  } catch {
    return [];
  }
}

/** The folder for the next deployment in a skill's journal. */
export function nextEntryDir(journal: string): string {
  const last = entriesOf(journal).at(-1);
  return path.join(journal, String(last ? Number(last) + 1 : 1).padStart(4, '0'));
}

/** A deployment's record, checked (undefined when its deploy.json is missing). */
export function readEntry(entryDir: string): Entry | undefined {
  const file = path.join(entryDir, 'deploy.json');
  const raw = readJson<{ kind?: unknown }>(file);
  if (raw === undefined) return undefined;
  if (raw.kind !== 'package') return raw as DocumentEntry;
  const parsed = PackageEntrySchema.safeParse(raw);
  if (!parsed.success)
    throw new UserError(`${file}: not a record of a deployment (${parsed.error.issues[0]!.message})`);
  return parsed.data;
}

/** Runs `f` holding the lock of one skill's deployments (the lock is gone when it returns). */
export function underSkillLock<T>(journal: string, f: () => T): T {
  const lock = acquireRunLock(journal, {
    what: `deployments of the skill ${path.basename(journal)}`,
    otherwise: 'run it again once that process is done',
  });
  try {
    return f();
  } finally {
    lock.release();
  }
}

/** Removes `dir` and its parents up to `top` (included) while they are empty. */
export function removeEmptyUpTo(dir: string, top: string): void {
  for (let d = dir; d.startsWith(top); d = path.dirname(d)) {
    try {
      fs.rmdirSync(d);
    } catch {
      return; // not empty (or gone)
    }
    if (d === top) return;
  }
}

/** Removes a skill's journal and the journal folder when nothing is left in them. */
export function tidyJournal(folder: string, name: string): void {
  removeEmptyUpTo(journalOf(folder, name), path.join(folder, JOURNAL));
}
