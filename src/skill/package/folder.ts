/**
 * A skill package on disk: read a folder into a `SkillPackage`, write one into a new folder.
 *
 * Reading follows a symlink only when it stays inside the folder (and does not lead back into a
 * folder it is in), skips what skill-creator's `package_skill.py` leaves out of an archive
 * (`__pycache__`, `node_modules`, `*.pyc`, `.DS_Store`, and `evals/` at the root: the skill's
 * own evals, not part of what an agent loads) and `.git`, and refuses a file or a whole package
 * over the size limits, naming the file. Every refusal is a `PackageError`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PackageError } from './errors.ts';
import {
  DEFAULT_MODE,
  fileBytes,
  fileFromBytes,
  type PackageFile,
  packagePathProblem,
  type SkillPackage,
  SKILL_FILE,
} from './package.ts';

export interface PackageLimits {
  /** Largest file, in bytes. */
  maxFileBytes: number;
  /** Largest package (all files together), in bytes. */
  maxPackageBytes: number;
  /** Most files. */
  maxFiles: number;
}

export const DEFAULT_LIMITS: PackageLimits = {
  maxFileBytes: 20 * 1024 * 1024,
  maxPackageBytes: 100 * 1024 * 1024,
  maxFiles: 2000,
};

const SKIPPED_NAMES = new Set(['__pycache__', 'node_modules', '.DS_Store', '.git']);
/** Whether a path inside a package is left out of it (as skill archives leave it out). */
export function isSkipped(relPath: string): boolean {
  const segments = relPath.split('/');
  if (segments[0] === 'evals') return true;
  return segments.some((s) => SKIPPED_NAMES.has(s)) || relPath.endsWith('.pyc');
}

const bytes = (n: number) => n.toLocaleString('en');

/**
 * Counts a package's files and bytes against the limits as they are read; `where` names the
 * folder or archive, `fileName` a file in it, in the errors.
 */
export function sizeTally(where: string, limits: PackageLimits, fileName: (rel: string) => string) {
  let total = 0;
  let count = 0;
  return (rel: string, size: number): void => {
    if (size > limits.maxFileBytes)
      throw new PackageError(
        'too-large',
        fileName(rel),
        `${fileName(rel)} has ${bytes(size)} bytes, more than the ${bytes(limits.maxFileBytes)} a package file may have`,
      );
    total += size;
    if (total > limits.maxPackageBytes)
      throw new PackageError(
        'too-large',
        where,
        `${where} holds more than the ${bytes(limits.maxPackageBytes)} bytes a package may have`,
      );
    count += 1;
    if (count > limits.maxFiles)
      throw new PackageError(
        'too-large',
        where,
        `${where} holds more than the ${limits.maxFiles} files a package may have`,
      );
  };
}

const isInside = (root: string, p: string) => p === root || p.startsWith(root + path.sep);

/** Reads the skill folder `dir` (which holds `SKILL.md`). */
export function readPackageDir(dir: string, limits: PackageLimits = DEFAULT_LIMITS): SkillPackage {
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    throw new PackageError('not-found', dir, `${dir} is not a folder`);
  const root = fs.realpathSync(dir);
  const skillPath = path.join(dir, SKILL_FILE);
  if (!fs.statSync(skillPath, { throwIfNoEntry: false })?.isFile())
    throw new PackageError(
      'no-skill-md',
      dir,
      `${dir} is not a skill package: it has no ${SKILL_FILE} file at its root`,
    );
  const shown = (rel: string) => path.join(dir, rel);
  const tally = sizeTally(`the skill folder ${dir}`, limits, shown);
  const files = new Map<string, PackageFile>();
  let skill = '';
  // The real folders from the root down to the one being read: a symlink to any of them is a loop.
  const open: string[] = [];
  const visit = (abs: string, rel: string) => {
    open.push(abs);
    for (const entry of fs.readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (isSkipped(relPath)) continue;
      let full = path.join(abs, entry.name);
      if (entry.isSymbolicLink()) {
        let target: string;
        try {
          target = fs.realpathSync(full);
        } catch {
          throw new PackageError('symlink', shown(relPath), `${shown(relPath)} is a symlink that leads nowhere`);
        }
        if (!isInside(root, target))
          throw new PackageError(
            'symlink',
            shown(relPath),
            `${shown(relPath)} is a symlink to ${target}, outside the skill folder ${dir}`,
          );
        if (open.includes(target))
          throw new PackageError('symlink', shown(relPath), `${shown(relPath)} is a symlink back to a folder it is in`);
        full = target;
      }
      const stat = fs.statSync(full);
      if (stat.isDirectory()) {
        visit(full, relPath);
        continue;
      }
      if (!stat.isFile()) continue;
      tally(relPath, stat.size);
      const content = fs.readFileSync(full);
      // A file that grew since its size was counted is counted again at its size now.
      if (content.byteLength > stat.size) tally(relPath, content.byteLength - stat.size);
      const file = fileFromBytes(content, stat.mode & 0o777);
      if (relPath === SKILL_FILE) {
        if (file.kind !== 'text') throw new PackageError('not-text', skillPath, `${skillPath} is not UTF-8 text`);
        skill = file.text;
        continue;
      }
      files.set(relPath, file);
    }
    open.pop();
  };
  visit(root, '');
  return files.size ? { skill, files } : { skill };
}

/** Writes `pkg` into `dir`, which must not exist yet; each file keeps its mode. */
export function writePackageDir(dir: string, pkg: SkillPackage): void {
  for (const rel of pkg.files?.keys() ?? []) {
    const problem = packagePathProblem(rel);
    if (problem) throw new PackageError('path', rel, `cannot write the package to ${dir}: ${problem}`);
  }
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, SKILL_FILE), pkg.skill, { mode: DEFAULT_MODE });
  for (const [rel, file] of pkg.files ?? []) {
    const full = path.join(dir, ...rel.split('/'));
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, fileBytes(file), { mode: file.mode });
    fs.chmodSync(full, file.mode);
  }
}
