/**
 * Adopting a staged skill package, and rolling it back: the package's files are changed one by
 * one inside the adoption's transaction (`transaction.ts`), so that the whole package, with the
 * night's other documents, is adopted or not at all. Only what differs is touched (a file edited,
 * added or removed, a mode changed); every file it replaces or removes is kept in the night's
 * backup (`backup/<slug>/<path>`), and a rollback puts each back byte for byte with its mode.
 * The package must be as the night read it, every file of it: one edited, added or removed since
 * refuses the adoption, naming it. What a package leaves out (`__pycache__`, `.git`, …) is not
 * looked at, and never touched.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../../errors.ts';
import { type FolderManifest, folderChanges, folderFiles, manifestOf } from '../../deploy/folder-state.ts';
import { documentSlug, type StagedDocument, type StagedPackage } from '../staging/staging.ts';
import { type FileChange, missingDirs, readLive, sha256Bytes } from './transaction.ts';

/** What an adoption did to one file of a package, for its rollback. */
export const ReceiptFileSchema = z.object({
  /** The file's path inside the package. */
  path: z.string(),
  /** '' when the file did not exist. */
  sha256_before: z.string(),
  mode_before: z.number().nullable(),
  /** '' when the adoption removed it. */
  sha256_after: z.string(),
  mode_after: z.number().nullable(),
  /** The backup of the bytes before, relative to the night ('' when the file did not exist). */
  backup: z.string(),
  created_dirs: z.array(z.string()),
});
export type ReceiptFile = z.infer<typeof ReceiptFileSchema>;

/** Every file of a live package, pinned (its bytes' hash and mode); a link in it is refused. */
export function livePackagePins(dir: string): FolderManifest {
  const files = new Map<string, { mode: number; bytes: Uint8Array }>();
  for (const [rel, f] of folderFiles(dir) ?? []) {
    if (f.kind === 'link')
      throw new UserError(
        `${path.join(dir, rel)} is a symbolic link: Sleep changes only regular files in a skill package`,
      );
    files.set(rel, f);
  }
  return manifestOf(files);
}

/** The file changes that adopt a staged package, what refuses it, and what its receipt keeps. */
export function packageAdoption(
  night: string,
  d: StagedDocument,
  pkg: StagedPackage,
): { changes: FileChange[]; files: ReceiptFile[]; problems: string[] } {
  const problems: string[] = [];
  const proposed = folderFiles(path.join(night, pkg.proposed_dir)) ?? new Map();
  const tampered = folderChanges(pkg.proposed_files, proposed);
  if (tampered.length) problems.push(`${pkg.proposed_dir} is not the package the night staged: ${tampered.join(', ')}`);
  const live = folderFiles(pkg.live_dir);
  const edited = folderChanges(pkg.live_files, live ?? new Map());
  if (edited.length)
    problems.push(
      `${pkg.live_dir} (${d.name}) was changed since the night read it: ${edited.join(', ')}; it is left as it is (run a new night to learn on top of it)`,
    );
  if (problems.length) return { changes: [], files: [], problems };

  const changes: FileChange[] = [];
  const files: ReceiptFile[] = [];
  const paths = [...new Set([...Object.keys(pkg.live_files), ...Object.keys(pkg.proposed_files)])].sort();
  for (const rel of paths) {
    const was = live?.get(rel);
    const is = proposed.get(rel);
    const before = was?.kind === 'file' ? was : undefined;
    const after = is?.kind === 'file' ? is : undefined;
    if (before && after && before.mode === after.mode && before.bytes.equals(after.bytes)) continue;
    const file = path.join(pkg.live_dir, ...rel.split('/'));
    if (before && fs.statSync(file).nlink > 1) {
      problems.push(
        `${file} has other hard links: replacing it would split them; adopt by hand from ${pkg.proposed_dir}`,
      );
      continue;
    }
    const backup = before ? path.join(night, 'backup', documentSlug(d.kind, d.name), ...rel.split('/')) : undefined;
    changes.push({
      name: `${d.name}: ${rel}`,
      path: file,
      before: before?.bytes ?? null,
      after: after?.bytes ?? null,
      ...(after ? { mode: after.mode } : {}),
      ...(backup ? { backup } : {}),
    });
    files.push({
      path: rel,
      sha256_before: before ? sha256Bytes(before.bytes) : '',
      mode_before: before?.mode ?? null,
      sha256_after: after ? sha256Bytes(after.bytes) : '',
      mode_after: after?.mode ?? null,
      backup: backup ? path.relative(night, backup) : '',
      created_dirs: missingDirs(file),
    });
  }
  return { changes, files, problems };
}

/** The file changes that roll an adopted package back, and what refuses it. */
export function packageRollback(
  night: string,
  name: string,
  liveDir: string,
  files: ReceiptFile[],
): { changes: FileChange[]; problems: string[] } {
  const changes: FileChange[] = [];
  const problems: string[] = [];
  for (const f of files) {
    const file = path.join(liveDir, ...f.path.split('/'));
    const now = readLive(file);
    const mode = now === null ? null : fs.statSync(file).mode & 0o7777;
    if ((now === null ? '' : sha256Bytes(now)) !== f.sha256_after || mode !== f.mode_after) {
      problems.push(
        `${file} (${name}) changed since it was adopted; it is left as it is (its backup: ${f.backup ? path.join(night, f.backup) : 'none, it did not exist'})`,
      );
      continue;
    }
    let before: Buffer | null = null;
    if (f.backup) {
      before = fs.readFileSync(path.join(night, f.backup));
      if (sha256Bytes(before) !== f.sha256_before)
        problems.push(`the backup ${f.backup} is not the file as it was (its hash differs)`);
    }
    changes.push({
      name: `${name}: ${f.path}`,
      path: file,
      before: now,
      after: before,
      ...(f.mode_before !== null ? { mode: f.mode_before } : {}),
      removeDirs: f.created_dirs,
    });
  }
  return { changes, problems };
}
