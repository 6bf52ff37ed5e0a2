/**
 * Deploying a package: the whole skill folder replaced in one swap (`swap.ts`), each file with
 * its bytes and mode, the folder that was there kept in the deployment's entry for a rollback,
 * which puts it back as it was. A folder deployed as a package and changed since (a file edited,
 * added or removed, a mode changed) is replaced or rolled back only with `force`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { DEFAULT_MODE, fileBytes, type SkillPackage, SKILL_FILE } from '../skill/package/package.ts';
import { writePackageDir } from '../skill/package/folder.ts';
import { folderChanges, folderDiff, folderFiles, leftOutPaths, manifestOf } from './folder-state.ts';
import { entriesOf, nextEntryDir, readEntry, type Entry, type PackageEntry } from './journal.ts';
import { PREVIOUS, pathExists, swapIn, swapOut } from './swap.ts';

/** Every file the package puts in the skill's folder, `SKILL.md` holding `skillFile`. */
export function packageContents(
  pkg: SkillPackage,
  skillFile: string,
): Map<string, { mode: number; bytes: Uint8Array }> {
  const out = new Map([[SKILL_FILE, { mode: DEFAULT_MODE, bytes: Buffer.from(skillFile, 'utf8') as Uint8Array }]]);
  for (const [rel, file] of pkg.files ?? []) out.set(rel, { mode: file.mode, bytes: fileBytes(file) });
  return out;
}

/** What changed in the skill's folder since its last deployment, when that was a package (else nothing). */
export function changesSinceDeployed(
  journal: string,
  dir: string,
): { entry: PackageEntry; changes: string[] } | undefined {
  const last = entriesOf(journal).at(-1);
  const entry: Entry | undefined = last ? readEntry(path.join(journal, last)) : undefined;
  if (entry?.kind !== 'package') return undefined;
  return { entry, changes: folderChanges(entry.deployed, folderFiles(dir)) };
}

/** The refusal for a folder changed since it was deployed, naming what changed. */
export function changedSinceError(dir: string, time: string, changes: string[], doing: string): UserError {
  return new UserError(
    `${dir} was changed since skillopt deployed it (${time}): ${changes.join(', ')}; ${doing} would lose that. Use --force to go ahead anyway`,
  );
}

export interface PackagePlan {
  diff: string;
  changed: boolean;
  /** Set when the folder deployed last was changed since (the deployment needs `force`). */
  changedSince?: { time: string; changes: string[] };
  contents: Map<string, { mode: number; bytes: Uint8Array }>;
  /** What the folder there holds that is no part of a package (`.git`, `__pycache__`, …): not carried over. */
  leftOut: string[];
}

/** What deploying `contents` into `dir` changes, without writing. */
export function planPackage(
  journal: string,
  dir: string,
  contents: Map<string, { mode: number; bytes: Uint8Array }>,
): PackagePlan {
  const now = folderFiles(dir);
  const since = changesSinceDeployed(journal, dir);
  const changed = folderChanges(manifestOf(contents), now).length > 0;
  return {
    diff: changed ? folderDiff(dir, now, contents) : '',
    changed,
    ...(since?.changes.length ? { changedSince: { time: since.entry.time, changes: since.changes } } : {}),
    contents,
    leftOut: changed ? leftOutPaths(dir) : [],
  };
}

/** Writes the planned package in one swap; returns where the folder it replaced is kept. */
export function writePackage(
  journal: string,
  dir: string,
  run: string,
  plan: PackagePlan,
  createdDir: string | undefined,
): string | undefined {
  const entryDir = nextEntryDir(journal);
  const previous = pathExists(dir);
  const entry: PackageEntry = {
    kind: 'package',
    dir,
    run,
    time: new Date().toISOString(),
    deployed: manifestOf(plan.contents),
    previous,
    ...(createdDir && createdDir !== dir ? { created_dir: createdDir } : {}),
  };
  const skill = Buffer.from(plan.contents.get(SKILL_FILE)!.bytes).toString('utf8');
  const files = new Map(
    [...plan.contents]
      .filter(([rel]) => rel !== SKILL_FILE)
      .map(([rel, f]) => [rel, { kind: 'binary' as const, bytes: f.bytes, mode: f.mode }]),
  );
  swapIn(journal, dir, entryDir, entry, (staged) => {
    writePackageDir(staged, { skill, files });
    // The document's mode is the package default, whatever the umask.
    fs.chmodSync(path.join(staged, SKILL_FILE), DEFAULT_MODE);
  });
  return previous ? path.join(entryDir, PREVIOUS) : undefined;
}

/** Rolls back the package deployment recorded in `entryDir`; 'restored' when a folder was there before. */
export function rollbackPackage(
  journal: string,
  entryDir: string,
  entry: PackageEntry,
  force: boolean,
): 'restored' | 'removed' {
  const changes = folderChanges(entry.deployed, folderFiles(entry.dir));
  if (changes.length && !force) throw changedSinceError(entry.dir, entry.time, changes, 'rolling back');
  swapOut(journal, entry.dir, entryDir, entry.previous);
  return entry.previous ? 'restored' : 'removed';
}
