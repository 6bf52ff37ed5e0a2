/**
 * A skill package as the page shows it: the file tree of two versions side by side (the
 * candidate of a step against the skill it started from), each file's change (added, removed,
 * edited, unchanged), kind, size and mode, how many of the step's rollouts read or ran it, and
 * the text diff of one file. Binary files are never diffed or shown as text: they get their
 * sizes. A version is a skill reference (`skills.ts`): its `.md` file is `SKILL.md`, the manifest
 * beside it names the other files, whose bytes are in `blobs/`. A single document has no
 * manifest: no package view.
 */
import { parsePatch } from 'diff';
import type { RunDir } from '../../run/layout.ts';
import type { HistoryRecord } from '../../run/records.ts';
import { manifestFile, type PackageManifest, PackageManifestSchema } from '../../run/skill-files.ts';
import { SKILL_FILE } from '../../skill/package/package.ts';
import type { DiffPool } from '../files/diff-pool.ts';
import { parseJsonFile } from '../files/file-cache.ts';
import { HttpError, readInside } from '../files/safe-path.ts';
import { diffSkills, MAX_DIFF_BYTES, patchLines, readSkill, type SkillDiff, skillFile } from './skills.ts';

type Entry = PackageManifest['files'][number];

export interface PackageFileView {
  path: string;
  kind: 'text' | 'binary';
  change: 'added' | 'removed' | 'edited' | 'unchanged';
  /** Bytes before and after (absent on the side where the file is not). */
  sizeBefore?: number;
  sizeAfter?: number;
  /** Set when only the file's mode changed, or it changed too: octal, before → after. */
  mode?: string;
  /** Of the step's rollouts, how many read and ran the file. */
  read?: number;
  ran?: number;
}

export interface PackageTree {
  a: string;
  b: string;
  files: PackageFileView[];
  /** How many rollouts the read and ran counts are out of (absent without counts). */
  rollouts?: number;
}

/** A version's other files from its manifest, or undefined for a single document. */
function manifestOf(run: RunDir, ref: string): Map<string, Entry> | undefined {
  const read = parseJsonFile(run.root, manifestFile(skillFile(run, ref)), PackageManifestSchema, 'a package manifest');
  if (!read.ok) {
    if (read.missing) return undefined;
    throw new HttpError(409, read.error);
  }
  return new Map(read.value.files.map((f) => [f.path, f]));
}

const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');

/** The tree of `b` against `a`, with the read counts of `usage` (a step record's `package_usage`); undefined when neither is a package. */
export function packageTree(
  run: RunDir,
  a: string,
  b: string,
  usage?: HistoryRecord['package_usage'],
): PackageTree | undefined {
  const before = manifestOf(run, a);
  const after = manifestOf(run, b);
  if (!before && !after) return undefined;
  // Each SKILL.md read once: its size and, to tell an edit, its text.
  const [skillA, skillB] = [readSkill(run, a), readSkill(run, b)];
  const files: PackageFileView[] = [
    {
      path: SKILL_FILE,
      kind: 'text',
      change: skillA.text !== skillB.text || skillA.size !== skillB.size ? 'edited' : 'unchanged',
      sizeBefore: skillA.size,
      sizeAfter: skillB.size,
    },
  ];
  const paths = [...new Set([...(before?.keys() ?? []), ...(after?.keys() ?? [])])].sort();
  for (const path of paths) {
    const x = before?.get(path);
    const y = after?.get(path);
    const change = !x ? 'added' : !y ? 'removed' : x.sha256 !== y.sha256 ? 'edited' : 'unchanged';
    const modeChanged = x && y && x.mode !== y.mode;
    files.push({
      path,
      kind: (y ?? x)!.kind,
      change: change === 'unchanged' && modeChanged ? 'edited' : change,
      ...(x ? { sizeBefore: x.size } : {}),
      ...(y ? { sizeAfter: y.size } : {}),
      ...(modeChanged ? { mode: `${octal(x.mode)} → ${octal(y.mode)}` } : {}),
    });
  }
  if (usage)
    for (const f of files) {
      const used = usage.files[f.path];
      f.read = used?.read ?? 0;
      f.ran = used?.ran ?? 0;
    }
  return { a, b, files, ...(usage ? { rollouts: usage.rollouts } : {}) };
}

function blobText(run: RunDir, entry: Entry | undefined, ref: string): string {
  if (!entry) return '';
  if (entry.kind === 'binary')
    throw new HttpError(400, `${entry.path} is a binary file: it is carried as it is, never diffed`);
  if (entry.size > MAX_DIFF_BYTES)
    throw new HttpError(
      413,
      `${entry.path} of ${ref} is ${entry.size.toLocaleString('en')} bytes, over the diff's limit`,
    );
  const read = readInside(run.root, run.path('blobs', entry.sha256), MAX_DIFF_BYTES);
  if (!read) throw new HttpError(404, `the bytes of ${entry.path} (blobs/${entry.sha256}) are missing from this run`);
  return read.data.toString('utf8');
}

/** The diff of one file of the package between versions `a` and `b` (`SKILL.md` as the skill diff). */
export async function diffPackageFile(
  run: RunDir,
  pool: DiffPool,
  a: string,
  b: string,
  file: string,
  signal?: AbortSignal,
): Promise<SkillDiff> {
  if (file === SKILL_FILE) return diffSkills(run, pool, a, b, 3, signal);
  const x = manifestOf(run, a)?.get(file);
  const y = manifestOf(run, b)?.get(file);
  if (!x && !y) throw new HttpError(404, `neither ${a} nor ${b} has a file ${file}`);
  const patch = await pool.diff(
    {
      before: blobText(run, x, a),
      after: blobText(run, y, b),
      labels: { before: `${a}:${file}`, after: `${b}:${file}` },
      context: 3,
    },
    signal,
  );
  return { a, b, ...patchLines(parsePatch(patch)[0]) };
}
