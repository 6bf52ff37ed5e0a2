/**
 * A live skill that is a package: its `SKILL.md` sits in a folder with other files (references,
 * scripts, assets). A night reads the whole folder with the package rules (`readPackageDir`),
 * pins every file (`livePackagePins`), replays tasks under all of it, and stages the folder
 * whole, so that adoption changes the package at once and refuses it when any file changed
 * since the night read it. Tonight's edits change `SKILL.md`'s learned block only; a proposal
 * whose `SKILL.md` breaks the package (a link to a file that is not there, front matter an agent
 * would refuse) is not staged. A `SKILL.md` alone in its folder stays a single document.
 */
import path from 'node:path';
import { UserError } from '../../errors.ts';
import { type FolderManifest, folderFiles } from '../../deploy/folder-state.ts';
import { brokenByEdits, PackageChecker } from '../../engine/stages/package-check.ts';
import { isSkipped, readPackageDir } from '../../skill/package/folder.ts';
import { hasFiles, type PackageFiles, SKILL_FILE } from '../../skill/package/package.ts';
import { livePackagePins } from '../adoption/package.ts';

export interface LivePackage {
  /** The skill's folder. */
  dir: string;
  /** Every file as the night read it (`SKILL.md` included). */
  pins: FolderManifest;
  /** The files besides `SKILL.md`. */
  files: PackageFiles;
}

/** The package around a live `SKILL.md`, or undefined when the file stands alone (or is not a `SKILL.md`). */
export function livePackage(skillMd: string): LivePackage | undefined {
  if (path.basename(skillMd) !== SKILL_FILE) return undefined;
  const dir = path.dirname(skillMd);
  const others = [...(folderFiles(dir)?.keys() ?? [])].filter((rel) => rel !== SKILL_FILE && !isSkipped(rel));
  if (others.length === 0) return undefined;
  let pkg;
  try {
    pkg = readPackageDir(dir);
  } catch (err) {
    throw new UserError(`${dir}: the skill is a package a night cannot read: ${(err as Error).message}`);
  }
  if (!hasFiles(pkg)) return undefined;
  return { dir, pins: livePackagePins(dir), files: pkg.files };
}

const checker = new PackageChecker();

/** Why the package with `proposed` as its `SKILL.md` is broken where the live one was not, or undefined. */
export async function brokenProposal(live: LivePackage, skill: string, proposed: string): Promise<string | undefined> {
  const [before, after] = await Promise.all([
    checker.validate({ skill, files: live.files }),
    checker.validate({ skill: proposed, files: live.files }),
  ]);
  const broken = brokenByEdits(before, after);
  return broken.length
    ? `the edits break the package: ${broken.map((c) => `${c.check}${c.file ? ` (${c.file})` : ''}: ${c.message}`).join('; ')}`
    : undefined;
}
