/**
 * Adoption and rollback: the only way a night changes a live document.
 *
 * `adopt` applies a night's staged proposals (all of them, or those named) as one transaction
 * (`transaction.ts`): under the adoption lock, with each live file's bytes kept in a backup in
 * the night's folder, and the receipt (`adopted.json`) written as the commit point. A live file
 * whose bytes or real path differ from what the night pinned (the user edited it, or it is now a
 * link elsewhere) is never overwritten: the whole adoption is refused, naming it.
 *
 * `rollback` puts the files of the latest adoption (of a night, or of all) back to their
 * backups, byte for byte (a file the adoption created is removed), as one transaction too, and
 * only while each still holds what the adoption wrote.
 *
 * A staged skill package is adopted file by file within the same transaction (`package.ts`):
 * every file of the package is pinned, and the receipt keeps each file the adoption changed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../../errors.ts';
import { readJson, writeJsonAtomic } from '../../run/atomic.ts';
import { acquireRunLock } from '../../run/lock.ts';
import { SKILL_FILE } from '../../skill/package/package.ts';
import { documentSlug, readManifest, stagedNights, type StagedDocument } from '../staging/staging.ts';
import { packageAdoption, packageRollback, type ReceiptFile, ReceiptFileSchema } from './package.ts';
import {
  missingDirs,
  readLive,
  realPathOf,
  recover,
  runTransaction,
  sha256Bytes,
  type FileChange,
} from './transaction.ts';

const ReceiptEntrySchema = z.object({
  name: z.string(),
  kind: z.string(),
  live_path: z.string(),
  sha256_before: z.string(),
  sha256_after: z.string(),
  /** The backup of the bytes before ('' when the file did not exist). */
  backup: z.string(),
  /** Folders the adoption created for the file (a rollback removes them when empty). */
  created_dirs: z.array(z.string()).default([]),
  /** A package: its folder and each of its files the adoption changed (`live_path` is its `SKILL.md`). */
  package: z.object({ live_dir: z.string(), files: z.array(ReceiptFileSchema) }).optional(),
});
const AdoptionSchema = z.object({
  id: z.string(),
  at: z.string(),
  documents: z.array(ReceiptEntrySchema),
  rolled_back: z.object({ id: z.string(), at: z.string() }).optional(),
});
export const ReceiptSchema = z.object({ adoptions: z.array(AdoptionSchema) });
export type Adoption = z.infer<typeof AdoptionSchema>;
export type Receipt = z.infer<typeof ReceiptSchema>;

export const receiptFile = (night: string) => path.join(night, 'adopted.json');
export const journalFile = (stateDir: string) => path.join(stateDir, 'adopt.journal.json');

export function readReceipt(night: string): Receipt {
  const file = receiptFile(night);
  const raw = readJson(file);
  if (raw === undefined) return { adoptions: [] };
  const parsed = ReceiptSchema.safeParse(raw);
  if (!parsed.success) throw new UserError(`${file}: not a receipt of adoptions (${parsed.error.issues[0]!.message})`);
  return parsed.data;
}

/** The names a night adopted and has not rolled back. */
export function adoptedNames(night: string): Set<string> {
  return new Set(
    readReceipt(night)
      .adoptions.filter((a) => !a.rolled_back)
      .flatMap((a) => a.documents.map((d) => d.name)),
  );
}

/** The staged documents of a night not adopted yet. */
export function pendingDocuments(night: string): StagedDocument[] {
  const adopted = adoptedNames(night);
  return readManifest(night).documents.filter((d) => !adopted.has(d.name));
}

/** Runs `f` under the adoption lock, after finishing any change a killed process left. */
export function underAdoptionLock<T>(stateDir: string, f: () => T, options: { forceUnlock?: boolean } = {}): T {
  fs.mkdirSync(stateDir, { recursive: true });
  const lock = acquireRunLock(path.join(stateDir, 'locks', 'adopt'), {
    forceUnlock: options.forceUnlock,
    what: 'adoption',
    otherwise: 'run it again once that process is done',
  });
  try {
    recover(journalFile(stateDir));
    return f();
  } finally {
    lock.release();
  }
}

export interface AdoptResult {
  night: string;
  adopted: { name: string; live_path: string; backup: string }[];
}

export function adopt(
  stateDir: string,
  night: string,
  names: string[] | undefined,
  options: { forceUnlock?: boolean } = {},
): AdoptResult {
  return underAdoptionLock(
    stateDir,
    () => {
      const manifest = readManifest(night);
      const pending = pendingDocuments(night);
      let chosen = pending;
      if (names?.length) {
        const known = new Set(manifest.documents.map((d) => d.name));
        for (const n of names) {
          if (!known.has(n))
            throw new UserError(
              `the night ${path.basename(night)} staged no document '${n}'; it staged: ${manifest.documents.map((d) => d.name).join(', ') || 'nothing'}`,
            );
        }
        chosen = pending.filter((d) => names.includes(d.name));
        const done = names.filter((n) => !chosen.some((d) => d.name === n));
        if (done.length)
          throw new UserError(
            `already adopted from this night: ${done.join(', ')} (roll it back first to adopt it again)`,
          );
      }
      if (chosen.length === 0) {
        throw new UserError(
          manifest.documents.length
            ? `everything the night ${path.basename(night)} staged is adopted already`
            : `the night ${path.basename(night)} staged nothing to adopt (no proposal passed the gate)`,
        );
      }
      const changes: FileChange[] = [];
      const problems: string[] = [];
      /** Per chosen document: its changes, and for a package the receipt of each file. */
      const plans: { changes: FileChange[]; files?: ReceiptFile[] }[] = [];
      for (const d of chosen) {
        if (d.package) {
          if (realPathOf(d.live_path) !== d.live_realpath)
            problems.push(
              `${d.live_path} now leads to ${realPathOf(d.live_path)}, not to ${d.live_realpath} as when the night read it`,
            );
          const plan = packageAdoption(night, d, d.package);
          problems.push(...plan.problems);
          changes.push(...plan.changes);
          plans.push(plan);
          continue;
        }
        const proposed = fs.readFileSync(path.join(night, d.proposed_file));
        if (sha256Bytes(proposed) !== d.proposed_sha256)
          problems.push(`${d.proposed_file} is not the file the night staged (its hash differs)`);
        let live: Buffer | null;
        try {
          live = readLive(d.live_path);
        } catch (err) {
          problems.push((err as Error).message);
          continue;
        }
        if (realPathOf(d.live_path) !== d.live_realpath)
          problems.push(
            `${d.live_path} now leads to ${realPathOf(d.live_path)}, not to ${d.live_realpath} as when the night read it`,
          );
        const now = live === null ? '' : sha256Bytes(live);
        if (now !== d.live_sha256) {
          problems.push(
            `${d.live_path} (${d.name}) ${live === null ? 'was deleted' : d.live_sha256 ? 'was edited' : 'was created'} since the night read it; it is left as it is (run a new night to learn on top of it)`,
          );
        }
        if (live !== null && fs.statSync(d.live_path).nlink > 1)
          problems.push(
            `${d.live_path} has other hard links: replacing it would split them; adopt by hand from ${d.proposed_file}`,
          );
        const change: FileChange = {
          name: d.name,
          path: d.live_path,
          before: live,
          after: proposed,
          backup: live === null ? undefined : path.join(night, 'backup', `${documentSlug(d.kind, d.name)}.md`),
        };
        changes.push(change);
        plans.push({ changes: [change] });
      }
      if (problems.length) throw new UserError(`nothing adopted:\n  ${problems.join('\n  ')}`);
      for (const c of changes) {
        if (c.backup && fs.existsSync(c.backup))
          throw new UserError(`${c.backup} exists already: a backup is never replaced (move it away to adopt again)`);
      }
      const receipt = readReceipt(night);
      const documents = chosen.map((d, i) => receiptEntry(night, d, plans[i]!));
      runTransaction(journalFile(stateDir), 'adopt', changes, receiptFile(night), (id) => {
        const entry: Adoption = { id, at: new Date().toISOString(), documents };
        writeJsonAtomic(receiptFile(night), { adoptions: [...receipt.adoptions, entry] });
      });
      return {
        night,
        adopted: documents.map((e) => ({
          name: e.name,
          live_path: e.live_path,
          backup: e.backup ? path.join(night, e.backup) : '',
        })),
      };
    },
    options,
  );
}

export interface RollbackResult {
  night: string;
  restored: { name: string; live_path: string; removed: boolean }[];
}

/** The latest adoption not rolled back: of `night`, or of every night in the state folder. */
function latestAdoption(stateDir: string, night?: string): { night: string; adoption: Adoption } | undefined {
  const nights = night ? [night] : stagedNights(stateDir).map((n) => n.dir);
  let best: { night: string; adoption: Adoption } | undefined;
  for (const n of nights) {
    for (const a of readReceipt(n).adoptions) {
      if (!a.rolled_back && (!best || a.at > best.adoption.at)) best = { night: n, adoption: a };
    }
  }
  return best;
}

/** What the receipt keeps of one adopted document (a package: of each of its files it changed). */
function receiptEntry(
  night: string,
  d: StagedDocument,
  plan: { changes: FileChange[]; files?: ReceiptFile[] },
): Adoption['documents'][number] {
  if (d.package && plan.files) {
    const skill = plan.files.find((f) => f.path === SKILL_FILE);
    return {
      name: d.name,
      kind: d.kind,
      live_path: d.live_path,
      sha256_before: d.live_sha256,
      sha256_after: d.proposed_sha256,
      backup: skill?.backup ?? '',
      created_dirs: skill?.created_dirs ?? [],
      package: { live_dir: d.package.live_dir, files: plan.files },
    };
  }
  const c = plan.changes[0]!;
  return {
    name: d.name,
    kind: d.kind,
    live_path: c.path,
    sha256_before: c.before === null ? '' : sha256Bytes(c.before),
    sha256_after: sha256Bytes(c.after!),
    backup: c.backup ? path.relative(night, c.backup) : '',
    created_dirs: missingDirs(c.path),
  };
}

export function rollback(
  stateDir: string,
  night: string | undefined,
  options: { forceUnlock?: boolean } = {},
): RollbackResult {
  return underAdoptionLock(
    stateDir,
    () => {
      const found = latestAdoption(stateDir, night);
      if (!found)
        throw new UserError(
          night ? `the night ${path.basename(night)} has no adoption to roll back` : 'no adoption to roll back',
        );
      const changes: FileChange[] = [];
      const problems: string[] = [];
      const restored: RollbackResult['restored'] = [];
      for (const d of found.adoption.documents) {
        if (d.package) {
          const plan = packageRollback(found.night, d.name, d.package.live_dir, d.package.files);
          problems.push(...plan.problems);
          changes.push(...plan.changes);
          restored.push({ name: d.name, live_path: d.live_path, removed: d.sha256_before === '' });
          continue;
        }
        const live = readLive(d.live_path);
        if ((live === null ? '' : sha256Bytes(live)) !== d.sha256_after) {
          problems.push(
            `${d.live_path} (${d.name}) changed since it was adopted; it is left as it is (its backup: ${d.backup ? path.join(found.night, d.backup) : 'none, it did not exist'})`,
          );
          continue;
        }
        let before: Buffer | null = null;
        if (d.backup) {
          before = fs.readFileSync(path.join(found.night, d.backup));
          if (sha256Bytes(before) !== d.sha256_before)
            problems.push(`the backup ${d.backup} is not the file as it was (its hash differs)`);
        }
        changes.push({ name: d.name, path: d.live_path, before: live, after: before, removeDirs: d.created_dirs });
        restored.push({ name: d.name, live_path: d.live_path, removed: before === null });
      }
      if (problems.length) throw new UserError(`nothing rolled back:\n  ${problems.join('\n  ')}`);
      const receipt = readReceipt(found.night);
      runTransaction(journalFile(stateDir), 'rollback', changes, receiptFile(found.night), (id) => {
        const adoptions = receipt.adoptions.map((a) =>
          a.id === found.adoption.id ? { ...a, rolled_back: { id, at: new Date().toISOString() } } : a,
        );
        writeJsonAtomic(receiptFile(found.night), { adoptions });
      });
      return { night: found.night, restored };
    },
    options,
  );
}
