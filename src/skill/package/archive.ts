/**
 * A skill package as a `.skill` (or `.zip`) archive, in the layout Anthropic's skill-creator
 * writes with `package_skill.py`: a zip whose entries all start with the skill folder's name
 * (`pdf/SKILL.md`, `pdf/scripts/fill.py`), files only, deflated, each keeping its Unix mode, and
 * without what that script leaves out (see `isSkipped`).
 *
 * Reading also takes an archive with `SKILL.md` at its root (a folder's contents zipped), skips
 * directory entries and the `__MACOSX/` folder macOS adds, and refuses with a `PackageError`: an
 * entry that leaves the package or has no plain path (`path`), a symlink entry (`symlink`), a
 * file or package over the limits by the sizes the archive declares (`too-large`), an entry that
 * inflates past its declared size or shares its bytes with another (`zip-bomb`), and anything
 * the zip reader cannot trust (`bad-archive`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../run/atomic.ts';
import { PackageError } from './errors.ts';
import { DEFAULT_LIMITS, isSkipped, type PackageLimits, sizeTally } from './folder.ts';
import {
  DEFAULT_MODE,
  fileBytes,
  fileFromBytes,
  type PackageFile,
  packagePathProblem,
  relativePathProblem,
  type SkillPackage,
  SKILL_FILE,
} from './package.ts';
import { readZipEntries, readZipEntry, writeZip, type ZipEntry, type ZipFileInput } from './zip.ts';

/** A package read from an archive, and the name of the folder it was packed from. */
export interface ArchivedPackage {
  name: string;
  pkg: SkillPackage;
}

/** The archive suffixes a skill is read from. */
export const ARCHIVE_SUFFIXES = ['.skill', '.zip'] as const;

export function isArchivePath(file: string): boolean {
  const lower = file.toLowerCase();
  return ARCHIVE_SUFFIXES.some((suffix) => lower.endsWith(suffix));
}

/** Reads the archive `file`: the whole file is refused when it is larger than a package may be. */
export function readPackageArchive(file: string, limits: PackageLimits = DEFAULT_LIMITS): ArchivedPackage {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat?.isFile()) throw new PackageError('not-found', file, `${file} is not a file`);
  if (stat.size > limits.maxPackageBytes)
    throw new PackageError(
      'too-large',
      file,
      `${file} has ${stat.size.toLocaleString('en')} bytes, more than the ${limits.maxPackageBytes.toLocaleString('en')} a package may have`,
    );
  return packageFromArchive(fs.readFileSync(file), file, limits);
}

/** The folder name for an archive with `SKILL.md` at its root: the archive's own name. */
const nameOfFile = (where: string) => path.basename(where).replace(/\.(skill|zip)$/i, '');

/** The package held by the archive `bytes`; `where` names the archive in errors. */
export function packageFromArchive(
  bytes: Uint8Array,
  where: string,
  limits: PackageLimits = DEFAULT_LIMITS,
): ArchivedPackage {
  const entryName = (name: string) => `${where}: ${name}`;
  const fileEntries = new Map<string, ZipEntry>();
  const seen = new Set<string>();
  // As many folder entries as files at most: a package with more is not a package.
  for (const entry of readZipEntries(bytes, where, 2 * limits.maxFiles)) {
    const name = entry.type === 'directory' ? entry.name.replace(/\/$/, '') : entry.name;
    const problem = relativePathProblem(name);
    if (problem) throw new PackageError('path', entryName(entry.name), `${where} is refused: the entry ${problem}`);
    if (name.split('/')[0] === '__MACOSX') continue;
    if (seen.has(name)) throw new PackageError('bad-archive', entryName(name), `${where} holds '${name}' twice`);
    seen.add(name);
    if (entry.type === 'symlink')
      throw new PackageError(
        'symlink',
        entryName(name),
        `${where} is refused: '${name}' is a symlink, which a skill package may not hold`,
      );
    if (entry.type === 'special')
      throw new PackageError('bad-archive', entryName(name), `${where}: '${name}' is neither a file nor a folder`);
    if (entry.type === 'file') fileEntries.set(name, entry);
  }
  const { prefix, name } = packageRoot(fileEntries, where);
  const tally = sizeTally(where, limits, entryName);
  const kept: [string, ZipEntry][] = [];
  for (const [entryPath, entry] of fileEntries) {
    const rel = entryPath.slice(prefix.length);
    if (isSkipped(rel)) continue;
    // Declared sizes first: nothing is inflated before the whole archive is known to fit.
    tally(entryPath, entry.size);
    kept.push([rel, entry]);
  }
  let skill = '';
  const files = new Map<string, PackageFile>();
  for (const [rel, entry] of kept) {
    const file = fileFromBytes(readZipEntry(bytes, entry, where), entry.mode || DEFAULT_MODE);
    if (rel !== SKILL_FILE) files.set(rel, file);
    else if (file.kind === 'text') skill = file.text;
    else throw new PackageError('not-text', entryName(entry.name), `${entryName(entry.name)} is not UTF-8 text`);
  }
  return { name, pkg: files.size ? { skill, files } : { skill } };
}

/**
 * Where the package sits in the archive: under its single top folder (`NAME/SKILL.md`, as
 * skill-creator writes it) or at the root (`SKILL.md`).
 */
function packageRoot(entries: ReadonlyMap<string, ZipEntry>, where: string): { prefix: string; name: string } {
  if (entries.has(SKILL_FILE)) return { prefix: '', name: nameOfFile(where) };
  const tops = [...new Set([...entries.keys()].map((p) => p.split('/')[0]!))];
  if (tops.length === 1 && entries.has(`${tops[0]}/${SKILL_FILE}`)) return { prefix: `${tops[0]}/`, name: tops[0]! };
  const found = tops.length > 1 ? ` (it holds the folders ${tops.map((t) => `'${t}'`).join(', ')})` : '';
  throw new PackageError(
    'no-skill-md',
    where,
    `${where} is not a skill archive: it has no ${SKILL_FILE} in a single top folder (NAME/${SKILL_FILE}, as skill-creator packs a skill) nor at its root${found}`,
  );
}

/**
 * The archive of `pkg` as `package_skill.py` writes it for the folder `name`: `NAME/SKILL.md`
 * first, then the other files by path, modes kept. The same package always gives the same bytes.
 */
export function packageArchive(pkg: SkillPackage, name: string): Uint8Array {
  const nameProblem = relativePathProblem(name) ?? (name.includes('/') ? `'${name}' holds a '/'` : undefined);
  if (nameProblem) throw new PackageError('path', name, `the archive's folder name is refused: ${nameProblem}`);
  const entries: ZipFileInput[] = [
    { name: `${name}/${SKILL_FILE}`, bytes: Buffer.from(pkg.skill, 'utf8'), mode: DEFAULT_MODE },
  ];
  const rest = [...(pkg.files ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [rel, file] of rest) {
    const problem = packagePathProblem(rel);
    if (problem) throw new PackageError('path', rel, `cannot archive the package: ${problem}`);
    if (!isSkipped(rel)) entries.push({ name: `${name}/${rel}`, bytes: fileBytes(file), mode: file.mode });
  }
  return writeZip(entries);
}

/** Writes the archive of `pkg` (folder `name`) to `file`, atomically: the old file or the new, never half. */
export function writePackageArchive(file: string, pkg: SkillPackage, name: string): void {
  writeFileAtomic(file, packageArchive(pkg, name));
}
