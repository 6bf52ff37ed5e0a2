/**
 * A skill version in the run directory. Its `.md` file holds `SKILL.md`'s text, as for every
 * run; a package also has a manifest beside it (`skill_v0003.files.json` for
 * `skill_v0003.md`) naming each other file's path, kind, mode, size and SHA-256, and each file's
 * bytes are stored once, under `blobs/<sha256>`. A version is read back exactly, binaries and
 * modes included. The best package is also written out whole as `best_skill/`, a folder an agent
 * or `deploy` can take as it is.
 */
import fs from 'node:fs';
import { z } from 'zod';
import {
  fileBytes,
  fileFromBytes,
  hasFiles,
  packageEntries,
  type PackageFile,
  type SkillPackage,
} from '../skill/package/package.ts';
import { writePackageDir } from '../skill/package/folder.ts';
import { readJson, writeFileAtomic } from './atomic.ts';

/** The run directory as these functions use it (`RunDir` has it all). */
export interface SkillStore {
  path(...parts: string[]): string;
  readText(file: string): string | undefined;
  writeText(file: string, text: string): void;
  writeJson(file: string, value: unknown): void;
}

export const PackageManifestSchema = z.object({
  files: z.array(
    z.object({
      path: z.string(),
      kind: z.enum(['text', 'binary']),
      mode: z.number().int(),
      size: z.number().int(),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
    }),
  ),
});
export type PackageManifest = z.infer<typeof PackageManifestSchema>;

/** The manifest beside a version's `.md` file. */
export function manifestFile(skillFile: string): string {
  return `${skillFile.replace(/\.md$/, '')}.files.json`;
}

function blobFile(dir: Pick<SkillStore, 'path'>, sha256: string): string {
  return dir.path('blobs', sha256);
}

/** Writes a version: the files' bytes first, then the manifest, then `SKILL.md`'s text. */
export function writeSkillFile(dir: SkillStore, file: string, pkg: SkillPackage): void {
  const manifest = manifestFile(file);
  if (!hasFiles(pkg)) {
    fs.rmSync(manifest, { force: true });
    dir.writeText(file, pkg.skill);
    return;
  }
  const entries = packageEntries(pkg).slice(1);
  for (const e of entries) {
    const blob = blobFile(dir, e.sha256);
    if (!fs.existsSync(blob)) writeFileAtomic(blob, fileBytes(pkg.files.get(e.path)!));
  }
  dir.writeJson(manifest, { files: entries } satisfies PackageManifest);
  dir.writeText(file, pkg.skill);
}

/** Reads a version back (undefined when its `.md` file is missing); a damaged manifest or blob is an error naming it. */
export function readSkillFile(dir: Pick<SkillStore, 'readText' | 'path'>, file: string): SkillPackage | undefined {
  const skill = dir.readText(file);
  if (skill === undefined) return undefined;
  const manifestPath = manifestFile(file);
  if (!fs.existsSync(manifestPath)) return { skill };
  const parsed = PackageManifestSchema.safeParse(readJson(manifestPath));
  if (!parsed.success)
    throw new Error(`${manifestPath} is not a package manifest: ${parsed.error.issues[0]?.message ?? 'unreadable'}`);
  const files = new Map<string, PackageFile>();
  for (const e of parsed.data.files) {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(blobFile(dir, e.sha256));
    } catch {
      throw new Error(`${manifestPath} names ${e.path}, whose bytes (${blobFile(dir, e.sha256)}) are missing`);
    }
    const read = fileFromBytes(bytes, e.mode);
    // The kind is the one recorded: a text file stays text even if its bytes would read otherwise.
    files.set(
      e.path,
      e.kind === read.kind ? read : e.kind === 'binary' ? { kind: 'binary', bytes, mode: e.mode } : read,
    );
  }
  return files.size ? { skill, files } : { skill };
}

/** The folder `best_skill/`, written whole for a package (replaced at once), removed for a single document. */
export function writeBestFolder(dir: SkillStore, pkg: SkillPackage): void {
  const folder = dir.path('best_skill');
  if (!hasFiles(pkg)) {
    fs.rmSync(folder, { recursive: true, force: true });
    return;
  }
  const staged = `${folder}.new-${process.pid}`;
  const old = `${folder}.old-${process.pid}`;
  fs.rmSync(staged, { recursive: true, force: true });
  writePackageDir(staged, pkg);
  if (fs.existsSync(folder)) fs.renameSync(folder, old);
  fs.renameSync(staged, folder);
  fs.rmSync(old, { recursive: true, force: true });
}
