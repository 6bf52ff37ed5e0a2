/**
 * A skill package: `SKILL.md`, the document an agent loads when the skill fires, and the files
 * it points to (references, scripts, assets). A single-document skill is a package with no other
 * files, and it hashes as its text always has, so runs of single documents keep their history.
 *
 * Text files are trainable; binary files (told by content: a NUL byte or bytes that are not
 * UTF-8) are carried byte for byte, never edited and never shown to a model as text.
 */
import { createHash } from 'node:crypto';
import { skillHash } from '../document.ts';

/** The document every package has at its root. */
export const SKILL_FILE = 'SKILL.md';

export type PackageFile =
  | { kind: 'text'; text: string; mode: number }
  | { kind: 'binary'; bytes: Uint8Array; mode: number };

/** A package's files other than `SKILL.md`, by POSIX path inside the package. */
export type PackageFiles = ReadonlyMap<string, PackageFile>;

export interface SkillPackage {
  /** `SKILL.md`'s text; a single-document skill is only this. */
  skill: string;
  /** The other files; absent (or empty) for a single document. */
  files?: PackageFiles;
}

/** The mode a file gets when nothing says otherwise (a script keeps its own). */
export const DEFAULT_MODE = 0o644;

/** Whether the package has files besides `SKILL.md`. */
export function hasFiles(pkg: SkillPackage): pkg is SkillPackage & { files: PackageFiles } {
  return (pkg.files?.size ?? 0) > 0;
}

// ignoreBOM keeps a leading byte-order mark in the text, so the file's bytes come back as they were.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The file read from `bytes`: text when it is UTF-8 without NUL bytes, else binary. */
export function fileFromBytes(bytes: Uint8Array, mode = DEFAULT_MODE): PackageFile {
  if (!bytes.includes(0)) {
    try {
      return { kind: 'text', text: decoder.decode(bytes), mode };
    } catch {
      // not UTF-8: binary
    }
  }
  return { kind: 'binary', bytes, mode };
}

export function fileBytes(file: PackageFile): Uint8Array {
  return file.kind === 'text' ? Buffer.from(file.text, 'utf8') : file.bytes;
}

/** SHA-256 of a file's bytes, in hex. */
export function fileSha256(file: PackageFile): string {
  return createHash('sha256').update(fileBytes(file)).digest('hex');
}

/** What a file is, for a listing: its size in bytes, and whether it is text. */
export interface FileEntry {
  path: string;
  kind: PackageFile['kind'];
  size: number;
  mode: number;
  sha256: string;
}

/** Every file of the package with its size and hash, `SKILL.md` first, then by path. */
export function packageEntries(pkg: SkillPackage): FileEntry[] {
  const entry = (path: string, file: PackageFile): FileEntry => ({
    path,
    kind: file.kind,
    size: fileBytes(file).byteLength,
    mode: file.mode,
    sha256: fileSha256(file),
  });
  const rest = [...(pkg.files ?? new Map<string, PackageFile>())]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, file]) => entry(path, file));
  return [entry(SKILL_FILE, { kind: 'text', text: pkg.skill, mode: DEFAULT_MODE }), ...rest];
}

/**
 * The package's identity, 16 hex characters: a single document's is `skillHash` of its text (as
 * before packages); a package's covers `SKILL.md` and every file's path, mode and bytes.
 */
export function packageHash(pkg: SkillPackage): string {
  if (!hasFiles(pkg)) return skillHash(pkg.skill);
  const parts = packageEntries(pkg).map((e) => [e.path, e.mode, e.kind, e.sha256]);
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}

/** The package with `SKILL.md` replaced, its other files kept. */
export function withSkill(pkg: SkillPackage, skill: string): SkillPackage {
  return hasFiles(pkg) ? { skill, files: pkg.files } : { skill };
}

/**
 * What is wrong with `path` as a place inside a package, or undefined: a relative POSIX path of
 * plain segments (no `..`, `.`, empty segment, backslash or NUL).
 */
export function relativePathProblem(path: string): string | undefined {
  if (!path) return 'the path is empty';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path))
    return `'${path}' is absolute; a package path is relative to the package`;
  if (path.includes('\\') || path.includes('\0')) return `'${path}' holds a backslash or NUL; package paths use '/'`;
  const segments = path.split('/');
  if (segments.some((s) => s === '..')) return `'${path}' leaves the package ('..')`;
  if (segments.some((s) => s === '' || s === '.')) return `'${path}' has an empty or '.' segment`;
  return undefined;
}

/** What is wrong with `path` as the place of one of a package's files besides `SKILL.md`, or undefined. */
export function packagePathProblem(path: string): string | undefined {
  if (path === SKILL_FILE) return `'${SKILL_FILE}' is the package's document, not one of its other files`;
  return relativePathProblem(path);
}

/** The identity of a package's files besides `SKILL.md` (paths, modes, bytes). */
export function filesHash(files: PackageFiles): string {
  return packageHash({ skill: '', files });
}

/** A skill as the trainer takes it: a single document's text, or a package. */
export type Skill = string | SkillPackage;

export function asPackage(skill: Skill): SkillPackage {
  return typeof skill === 'string' ? { skill } : skill;
}

/** `SKILL.md`'s text of a skill. */
export function skillText(skill: Skill): string {
  return typeof skill === 'string' ? skill : skill.skill;
}

/** A skill's identity (`packageHash`): what the score cache and the run files key on. */
export function skillId(skill: Skill): string {
  return typeof skill === 'string' ? skillHash(skill) : packageHash(skill);
}
