/**
 * A night's directory (`<state_dir>/nights/<YYYYMMDD-HHMMSS>/`): its report, diffs, evidence,
 * tasks and calls, and the proposals waiting for adoption. `manifest.json` is written last: a
 * night without one (stopped, or with nothing mined) is never offered for adoption. Each
 * proposal is pinned: the hash of its own bytes, and the hash and real path of the live file as
 * the night read it, so that adoption can tell a file the user edited since and leave it alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../../errors.ts';
import { readJson, writeFileAtomic, writeJsonAtomic } from '../../run/atomic.ts';
import { type FolderManifest, manifestOf } from '../../deploy/folder-state.ts';
import { writePackageDir } from '../../skill/package/folder.ts';
import { DEFAULT_MODE, fileBytes, type PackageFiles, SKILL_FILE } from '../../skill/package/package.ts';
import { sha256Bytes } from '../adoption/transaction.ts';

export const MANIFEST_SCHEMA = 'skillopt-sleep-night';
export const MANIFEST_VERSION = 1;
export const NIGHT_NAME = /^\d{8}-\d{6}(?:-\d+)?$/;

const FilePinSchema = z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), mode: z.number().int() });

/** A skill package: its folder and every file pinned, as the night read it and as it proposes it. */
export const StagedPackageSchema = z.object({
  /** The live skill's folder (`live_path` is its `SKILL.md`). */
  live_dir: z.string().min(1),
  /** Every file of the live package when the night read it, `SKILL.md` included, by POSIX path. */
  live_files: z.record(z.string(), FilePinSchema),
  /** The proposed package's folder, relative to the night. */
  proposed_dir: z.string().min(1),
  proposed_files: z.record(z.string(), FilePinSchema),
});
export type StagedPackage = z.infer<typeof StagedPackageSchema>;

export const StagedDocumentSchema = z.object({
  name: z.string().min(1),
  kind: z.enum(['skill', 'memory']),
  live_path: z.string().min(1),
  live_realpath: z.string().min(1),
  /** The live file's SHA-256 when the night read it; '' when it did not exist. */
  live_sha256: z.string().regex(/^([0-9a-f]{64})?$/),
  proposed_file: z.string().min(1),
  proposed_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  action: z.string(),
  baseline: z.number().nullable(),
  candidate: z.number().nullable(),
  /** Set when the document is a package's `SKILL.md`: adoption changes the whole package. */
  package: StagedPackageSchema.optional(),
});
export type StagedDocument = z.infer<typeof StagedDocumentSchema>;

export const ManifestSchema = z.object({
  schema: z.literal(MANIFEST_SCHEMA),
  schema_version: z.literal(MANIFEST_VERSION),
  night: z.number().int(),
  project: z.string(),
  created_at: z.string(),
  backend: z.string(),
  /** The proposals that passed the gate: what `adopt` may apply. */
  documents: z.array(StagedDocumentSchema),
});
export type Manifest = z.infer<typeof ManifestSchema>;

/** `20261130-190455` in local time. */
export function stamp(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}${p(date.getMonth() + 1)}${p(date.getDate())}-${p(date.getHours())}${p(date.getMinutes())}${p(date.getSeconds())}`;
}

export function nightsDir(stateDir: string): string {
  return path.join(stateDir, 'nights');
}

/** A new night directory, reserved atomically (`-2`, `-3`, … when two nights start in one second). */
export function reserveNightDir(stateDir: string, date = new Date()): string {
  const root = nightsDir(stateDir);
  fs.mkdirSync(root, { recursive: true });
  const base = stamp(date);
  for (let n = 1; ; n++) {
    const dir = path.join(root, n === 1 ? base : `${base}-${n}`);
    try {
      fs.mkdirSync(dir);
      return dir;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** A file name for a document's proposal and backup. */
export function documentSlug(kind: string, name: string): string {
  return `${kind}-${name.replace(/[^A-Za-z0-9._-]+/g, '_')}`;
}

export interface Proposal {
  name: string;
  kind: 'skill' | 'memory';
  livePath: string;
  liveRealpath: string;
  liveSha256: string;
  text: string;
  action: string;
  baseline: number | null;
  candidate: number | null;
  /** A package: its live folder with every file pinned (`livePackagePins`), and the files proposed besides `SKILL.md`. */
  package?: { liveDir: string; liveFiles: FolderManifest; files: PackageFiles };
}

/** Writes the proposals, then the manifest (last: it publishes the night). */
export function writeManifest(
  dir: string,
  head: Omit<Manifest, 'schema' | 'schema_version' | 'documents'>,
  proposals: Proposal[],
): Manifest {
  const documents: StagedDocument[] = proposals.map((p) => {
    const bytes = Buffer.from(p.text, 'utf8');
    const staged = p.package ? stagePackage(dir, p, p.package) : undefined;
    const rel = staged
      ? path.join(staged.proposed_dir, SKILL_FILE)
      : path.join('proposed', `${documentSlug(p.kind, p.name)}.md`);
    if (!staged) writeFileAtomic(path.join(dir, rel), bytes);
    return {
      name: p.name,
      kind: p.kind,
      live_path: p.livePath,
      live_realpath: p.liveRealpath,
      live_sha256: p.liveSha256,
      proposed_file: rel,
      proposed_sha256: sha256Bytes(bytes),
      action: p.action,
      baseline: p.baseline,
      candidate: p.candidate,
      ...(staged ? { package: staged } : {}),
    };
  });
  const manifest: Manifest = { schema: MANIFEST_SCHEMA, schema_version: MANIFEST_VERSION, ...head, documents };
  writeJsonAtomic(path.join(dir, 'manifest.json'), manifest);
  return manifest;
}

/** Writes a proposed package into the night (`proposed/<slug>/`), `SKILL.md` with its live mode. */
function stagePackage(night: string, p: Proposal, pkg: NonNullable<Proposal['package']>): StagedPackage {
  const proposedDir = path.join('proposed', documentSlug(p.kind, p.name));
  const full = path.join(night, proposedDir);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  writePackageDir(full, { skill: p.text, files: pkg.files });
  fs.chmodSync(path.join(full, SKILL_FILE), pkg.liveFiles[SKILL_FILE]?.mode ?? DEFAULT_MODE);
  const proposed = new Map([
    [
      SKILL_FILE,
      { mode: pkg.liveFiles[SKILL_FILE]?.mode ?? DEFAULT_MODE, bytes: Buffer.from(p.text, 'utf8') as Uint8Array },
    ],
  ]);
  for (const [rel, f] of pkg.files) proposed.set(rel, { mode: f.mode, bytes: fileBytes(f) });
  return {
    live_dir: pkg.liveDir,
    live_files: pkg.liveFiles,
    proposed_dir: proposedDir,
    proposed_files: manifestOf(proposed),
  };
}

export function readManifest(dir: string): Manifest {
  const file = path.join(dir, 'manifest.json');
  let raw: unknown;
  try {
    raw = readJson(file);
  } catch (err) {
    throw new UserError(`${file}: ${(err as Error).message}`);
  }
  if (raw === undefined)
    throw new UserError(`${dir} is not a staged night (it has no manifest.json: the night stopped, or mined nothing)`);
  const head = z.object({ schema: z.unknown(), schema_version: z.unknown() }).loose().safeParse(raw);
  if (!head.success || head.data.schema !== MANIFEST_SCHEMA || head.data.schema_version !== MANIFEST_VERSION) {
    throw new UserError(
      `${file}: not a night this version can adopt (schema ${JSON.stringify(head.data?.schema)} version ${JSON.stringify(head.data?.schema_version)}; expected ${MANIFEST_SCHEMA} ${MANIFEST_VERSION})`,
    );
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserError(`${file}: ${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data;
}

/** The staged nights, newest first (optionally of one project). */
export function stagedNights(stateDir: string, project?: string): { dir: string; manifest: Manifest }[] {
  const root = nightsDir(stateDir);
  let names: string[];
  try {
    names = fs.readdirSync(root).filter((n) => NIGHT_NAME.test(n));
  } catch {
    return [];
  }
  const out: { dir: string; manifest: Manifest }[] = [];
  for (const name of names.sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))) {
    const dir = path.join(root, name);
    if (!fs.existsSync(path.join(dir, 'manifest.json'))) continue;
    try {
      const manifest = readManifest(dir);
      if (project === undefined || manifest.project === project) out.push({ dir, manifest });
    } catch {
      // a damaged night is named when it is asked for by path, not offered here
    }
  }
  return out;
}

/** The night `--night` names (a path, or a night's name under the state folder). */
export function nightDirOf(stateDir: string, night: string): string {
  const byName = path.join(nightsDir(stateDir), night);
  return NIGHT_NAME.test(night) && fs.existsSync(byName) ? byName : path.resolve(night);
}
