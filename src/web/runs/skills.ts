/**
 * Versions of the skill in a run, named by short references the page can put in a URL, and the
 * diff between any two:
 *   `v:N`     skills/skill_vNNNN.md (the current skill after step N; v:0 is the initial skill)
 *   `best`    best_skill.md
 *   `cand:N`  the candidate of step N (steps/step_NNNN/candidate_skill.md)
 *   `slow:E`  the slow update's candidate at the end of epoch E
 */
import { parsePatch, type StructuredPatch } from 'diff';
import type { RunDir } from '../../run/layout.ts';
import type { DiffPool } from '../files/diff-pool.ts';
import { readTextCapped } from '../files/file-cache.ts';
import { HttpError, isFileInside, listInside } from '../files/safe-path.ts';

const MAX_SKILL_BYTES = 4 << 20;
/** Each of two skills being compared may be this large; the diff's time also has a limit (DiffPool). */
export const MAX_DIFF_BYTES = 1 << 20;

export interface SkillVersion {
  ref: string;
  label: string;
  step?: number;
}

export function skillFile(run: RunDir, ref: string): string {
  let m: RegExpExecArray | null;
  if (ref === 'best') return run.bestSkill;
  if ((m = /^v:(\d{1,6})$/.exec(ref))) return run.skill(Number(m[1]));
  if ((m = /^cand:(\d{1,6})$/.exec(ref))) return run.step(Number(m[1]), 'candidate_skill.md');
  if ((m = /^slow:(\d{1,3})$/.exec(ref))) return run.slowUpdate(Number(m[1]), 'candidate_skill.md');
  // A candidate pool's member, by origin (pool/<origin>.md).
  if ((m = /^pool:([a-z0-9_]{1,80})$/.exec(ref))) return run.path('pool', `${m[1]}.md`);
  throw new HttpError(400, `not a skill reference: ${ref} (expected best, v:N, cand:N, slow:E or pool:ORIGIN)`);
}

export function readSkill(
  run: RunDir,
  ref: string,
  maxBytes = MAX_SKILL_BYTES,
): { ref: string; text: string; truncated: boolean; size: number } {
  const file = skillFile(run, ref);
  const read = readTextCapped(run.root, file, maxBytes);
  if (!read) throw new HttpError(404, `skill ${ref} not found in this run (${file} does not exist)`);
  return { ref, text: read.text, truncated: read.truncated, size: read.size };
}

function listNumbered(run: RunDir, dir: string, pattern: RegExp): number[] {
  return listInside(run.root, run.path(dir))
    .map((e) => pattern.exec(e.name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/** The saved versions of the current skill (step numbers). */
export function savedVersions(run: RunDir): number[] {
  return listNumbered(run, 'skills', /^skill_v(\d+)\.md$/);
}

/** Every version a person may want to open, in order. */
export function listSkillVersions(run: RunDir): SkillVersion[] {
  const out: SkillVersion[] = [];
  for (const v of savedVersions(run))
    out.push({ ref: `v:${v}`, label: v === 0 ? 'initial skill (v0)' : `current after step ${v}`, step: v });
  if (isFileInside(run.root, run.bestSkill)) out.push({ ref: 'best', label: 'best skill' });
  for (const s of listNumbered(run, 'steps', /^step_(\d+)$/)) {
    if (isFileInside(run.root, run.step(s, 'candidate_skill.md')))
      out.push({ ref: `cand:${s}`, label: `candidate of step ${s}`, step: s });
  }
  for (const e of listNumbered(run, 'slow_update', /^epoch_(\d+)$/)) {
    if (isFileInside(run.root, run.slowUpdate(e, 'candidate_skill.md')))
      out.push({ ref: `slow:${e}`, label: `slow update candidate, epoch ${e}` });
  }
  return out;
}

/** The current skill when step `step` began: the newest saved version before it. */
export function currentBefore(run: RunDir, step: number): string | undefined {
  const before = savedVersions(run).filter((v) => v < step);
  return before.length ? `v:${before.at(-1)}` : undefined;
}

export interface DiffLine {
  /** ' ' unchanged, '+' added, '-' removed, '@' a hunk header. */
  t: ' ' | '+' | '-' | '@';
  text: string;
}

export interface SkillDiff {
  a: string;
  b: string;
  added: number;
  removed: number;
  lines: DiffLine[];
}

function skillForDiff(run: RunDir, ref: string): string {
  const read = readSkill(run, ref, MAX_DIFF_BYTES);
  if (read.truncated) {
    const mb = (n: number) => `${(n / (1 << 20)).toFixed(1)} MB`;
    throw new HttpError(
      413,
      `skill ${ref} is ${mb(read.size)}; a diff compares skills of up to ${mb(MAX_DIFF_BYTES)} each (open it whole instead)`,
    );
  }
  return read.text;
}

export async function diffSkills(
  run: RunDir,
  pool: DiffPool,
  a: string,
  b: string,
  context = 3,
  signal?: AbortSignal,
): Promise<SkillDiff> {
  const patch = await pool.diff(
    { before: skillForDiff(run, a), after: skillForDiff(run, b), labels: { before: a, after: b }, context },
    signal,
  );
  const [file] = parsePatch(patch);
  return { a, b, ...patchLines(file) };
}

/** One file's patch (parsed from a unified diff) as the page shows it: hunk headers and marked lines. */
export function patchLines(file: StructuredPatch | undefined): Omit<SkillDiff, 'a' | 'b'> {
  const lines: DiffLine[] = [];
  let added = 0;
  let removed = 0;
  for (const hunk of file?.hunks ?? []) {
    // The header as the patch wrote it (an empty side's start is one lower, as unified diffs have it).
    const start = (n: number, count: number) => (count === 0 ? n - 1 : n);
    lines.push({
      t: '@',
      text: `@@ -${start(hunk.oldStart, hunk.oldLines)},${hunk.oldLines} +${start(hunk.newStart, hunk.newLines)},${hunk.newLines} @@`,
    });
    for (const line of hunk.lines) {
      const t = line[0];
      if (t === '+') added++;
      else if (t === '-') removed++;
      else if (t !== ' ') continue; // "\ No newline at end of file"
      lines.push({ t, text: line.slice(1) });
    }
  }
  return { added, removed, lines };
}
