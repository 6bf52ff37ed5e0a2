/**
 * A skill package on disk: read a folder into a `SkillPackage`, write one into a new folder.
 *
 * Reading follows a symlink only when it stays inside the folder, skips what a skill archive
 * leaves out (`__pycache__`, `node_modules`, `*.pyc`, `.DS_Store`, `.git`, and `evals/` at the
 * root: the skill's own evals, not part of what an agent loads), and refuses a file or a whole
 * package over the size limits, naming the file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../errors.ts';
import { fileBytes, fileFromBytes, type PackageFile, type SkillPackage, SKILL_FILE } from './package.ts';

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

const isInside = (root: string, p: string) => p === root || p.startsWith(root + path.sep);

/** Reads the skill folder `dir` (which holds `SKILL.md`). */
export function readPackageDir(dir: string, limits: PackageLimits = DEFAULT_LIMITS): SkillPackage {
  const root = fs.realpathSync(dir);
  const skillPath = path.join(root, SKILL_FILE);
  if (!fs.existsSync(skillPath))
    throw new UserError(`${dir} is not a skill package: it has no ${SKILL_FILE} at its root`);
  const files = new Map<string, PackageFile>();
  let total = 0;
  let skill = '';
  const visit = (abs: string, rel: string) => {
    for (const entry of fs.readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (isSkipped(relPath)) continue;
      let full = path.join(abs, entry.name);
      if (entry.isSymbolicLink()) {
        const target = fs.realpathSync(full);
        if (!isInside(root, target))
          throw new UserError(`${path.join(dir, relPath)} is a symlink to ${target}, outside the skill folder ${dir}`);
        full = target;
      }
      const stat = fs.statSync(full);
      if (stat.isDirectory()) {
        visit(full, relPath);
        continue;
      }
      if (!stat.isFile()) continue;
      if (stat.size > limits.maxFileBytes)
        throw new UserError(
          `${path.join(dir, relPath)} has ${stat.size.toLocaleString('en')} bytes, more than the ${limits.maxFileBytes.toLocaleString('en')} a package file may have`,
        );
      total += stat.size;
      if (total > limits.maxPackageBytes)
        throw new UserError(
          `the skill folder ${dir} holds more than the ${limits.maxPackageBytes.toLocaleString('en')} bytes a package may have`,
        );
      const file = fileFromBytes(fs.readFileSync(full), stat.mode & 0o777);
      if (relPath === SKILL_FILE) {
        if (file.kind !== 'text') throw new UserError(`${skillPath} is not UTF-8 text`);
        skill = file.text;
        continue;
      }
      files.set(relPath, file);
      if (files.size > limits.maxFiles)
        throw new UserError(`the skill folder ${dir} holds more than the ${limits.maxFiles} files a package may have`);
    }
  };
  visit(root, '');
  return files.size ? { skill, files } : { skill };
}

/** Writes `pkg` into `dir`, which must not exist yet; each file keeps its mode. */
export function writePackageDir(dir: string, pkg: SkillPackage): void {
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, SKILL_FILE), pkg.skill);
  for (const [rel, file] of pkg.files ?? []) {
    const full = path.join(dir, ...rel.split('/'));
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, fileBytes(file), { mode: file.mode });
    fs.chmodSync(full, file.mode);
  }
}
