/**
 * The simulated optimizer's edits to a skill package. Shown the package's file list, it puts a
 * rule the failures show missing into a reference file for the failing kind of task (made with
 * `create_file` when the package lacks it) and says in `SKILL.md` when to open that file; a rule
 * that `SKILL.md` states but the target overlooks (the document is too long) moves out of
 * `SKILL.md` into the reference, when no other kind of task needs that line. It stays fallible:
 * some pointers say where but not when, and a misstep may land in a reference or delete one.
 */
import { z } from 'zod';
import type { Edit } from '../../skill/edits.ts';
import { SKILL_FILE } from '../../skill/package/package.ts';
import { frontMatter, stripProtectedRegions } from '../../skill/regions.ts';
import type { Rng } from '../../util/random.ts';
import { isMarkdownPath, pointersIn } from './references.ts';
import { CONVENTIONS, KINDS, POINTERS, TOPICS, VAGUE_POINTERS, type Kind } from './rules.ts';
import { recognise } from './world.ts';

const FilesSchema = z.array(
  z.object({ path: z.string().min(1), kind: z.enum(['text', 'binary']), size: z.number().nonnegative() }).loose(),
);

/** A package's files as an analyst request lists them: kind by path, `SKILL.md` left out. */
export type FileListing = Map<string, 'text' | 'binary'>;

/**
 * The package's files from an analyst request's `meta.files` (`[{path, kind, size}]`), or
 * undefined when the request has none: a single document.
 */
export function listedFiles(meta: object): FileListing | undefined {
  if (!('files' in meta) || meta.files === undefined) return undefined;
  const parsed = FilesSchema.safeParse(meta.files);
  if (!parsed.success)
    throw new Error(
      `the analyst request's meta.files must be a list of {path, kind: 'text' | 'binary', size}: ${parsed.error.issues[0]?.message ?? 'invalid'} at files.${parsed.error.issues[0]?.path.join('.') ?? ''}`,
    );
  return new Map(parsed.data.filter((f) => f.path !== SKILL_FILE).map((f) => [f.path, f.kind]));
}

/** The kind a failed task was of, as the trajectory names it; else the first kind the convention serves. */
export function failedKind(taskType: string, convention: string): Kind {
  const named = KINDS.find((k) => k === taskType);
  return named ?? CONVENTIONS.find((c) => c.id === convention)!.kinds[0]!;
}

/** Per kind of task, the conventions its failures missed: how often, and whether `SKILL.md` states them (a lapse). */
export type KindMisses = Map<Kind, Map<string, { count: number; lapse: boolean }>>;

/** The file `SKILL.md` points to for each kind, as the target would read the pointers (files it does not hold included). */
function pointedFiles(skill: string, files: FileListing): Map<Kind, string> {
  const out = new Map<Kind, string>();
  for (const p of pointersIn(skill, (path) => files.get(path) === 'text' || (!files.has(path) && isMarkdownPath(path))))
    for (const k of p.kinds) if (!out.has(k)) out.set(k, p.files[0]!);
  return out;
}

/** The lines of the skill's body (no front matter, no protected regions) an edit may target. */
function bodyLines(skill: string): string[] {
  const body = stripProtectedRegions(skill);
  return body
    .slice(frontMatter(body).length)
    .split('\n')
    .filter((l) => l.trim());
}

/** The first line of `lines` stating `convention` whose every rule serves `kind` (a line about that kind), if any. */
function homeLine(lines: string[], convention: string, kind: Kind): string | undefined {
  const rule = CONVENTIONS.find((c) => c.id === convention)!;
  const serves = (id: string) => CONVENTIONS.find((c) => c.id === id)!.kinds.includes(kind);
  return lines.find(
    (l) =>
      rule.recognise.test(l) &&
      pointersIn(l, isMarkdownPath).length === 0 &&
      [...recognise(l).conventions].every(serves),
  );
}

/**
 * Whether `line` can leave `SKILL.md` for `kind`'s reference: every other kind each of its rules
 * serves still finds the rule, on a line that stays or in the reference this patch writes for it.
 */
function movable(line: string, staying: string[], kind: Kind, written: Map<Kind, Set<string>>): boolean {
  return [...recognise(line).conventions].every((id) => {
    const rule = CONVENTIONS.find((c) => c.id === id)!;
    const elsewhere = staying.some((l) => l !== line && rule.recognise.test(l));
    return rule.kinds.every((k) => k === kind || elsewhere || written.get(k)?.has(id));
  });
}

/**
 * A line of `SKILL.md` that only repeats the references: each of its rules, for every kind the rule
 * serves, is for a kind `SKILL.md` already sends to an existing reference (the analyst trusts the
 * reference to hold it; the gate finds out when it does not).
 */
function repeatedLine(lines: string[], pointed: Map<Kind, string>, files: FileListing): string | undefined {
  const sent = (k: Kind) => files.get(pointed.get(k) ?? '') === 'text';
  return lines.find((l) => {
    const ids = [...recognise(l).conventions];
    return (
      ids.length > 0 &&
      pointersIn(l, isMarkdownPath).length === 0 &&
      ids.every((id) => CONVENTIONS.find((c) => c.id === id)!.kinds.every(sent))
    );
  });
}

/** The delete of `line`, with the heading above it when the line is all its section holds. */
function deletion(skill: string, line: string): Edit {
  const at = skill.indexOf(line);
  const heading = /(?:^|\n)(#{1,6} [^\n]*\n\n)$/.exec(skill.slice(0, at))?.[1];
  const after = skill.slice(at + line.length);
  const alone = /^\s*(?:\n#{1,6} |$)/.test(after);
  return { op: 'delete', target: heading && alone ? `${heading}${line}` : line };
}

const fill = (template: string, kind: Kind, file: string) =>
  template.replace('{plural}', TOPICS[kind].plural).replace('{one}', TOPICS[kind].one).replace('{file}', file);

export interface PackageProposal {
  edits: Edit[];
  summary: { failure_type: string; count: number; description: string }[];
  /** The reference files the edits write to, in order. */
  touched: string[];
}

/** Reference edits for the kinds whose failures `misses` counts, most failures first. */
export function packageEdits(opts: {
  skill: string;
  files: FileListing;
  misses: KindMisses;
  rng: Rng;
  /** Chance that a rule or a pointer is worded too vaguely for the target. */
  vague: number;
  /** The options not rejected in an earlier step. */
  fresh: (options: string[]) => string[];
}): PackageProposal {
  const { skill, files, rng, fresh } = opts;
  const lines = bodyLines(skill);
  const pointed = pointedFiles(skill, files);
  const repeated = repeatedLine(lines, pointed, files);
  const exists = new Set([...files].filter(([, kind]) => kind === 'text').map(([path]) => path));
  const deleted = new Set<string>();
  const written = new Map<Kind, Set<string>>();
  const proposal: PackageProposal = { edits: [], summary: [], touched: [] };
  const total = (k: Kind) => [...opts.misses.get(k)!.values()].reduce((n, m) => n + m.count, 0);
  const kinds = [...opts.misses.keys()].sort((a, b) => total(b) - total(a) || KINDS.indexOf(a) - KINDS.indexOf(b));
  /** A line in SKILL.md saying when to open `file`: for `kind`, unless it comes out too vague. */
  const point = (kind: Kind, file: string) => {
    const options = POINTERS.map((p) => fill(p, kind, file));
    const choices = fresh(options);
    const wording = rng.chance(opts.vague)
      ? fill(rng.pick(VAGUE_POINTERS), kind, file)
      : rng.pick(choices.length ? choices : options);
    proposal.edits.push({ op: 'append', content: wording });
    pointed.set(kind, file);
  };
  for (const kind of kinds) {
    const file = pointed.get(kind) ?? TOPICS[kind].file;
    if (!pointed.has(kind) && exists.has(file)) {
      // The kind's reference exists but SKILL.md never says when to open it: that first.
      point(kind, file);
      proposal.touched.push(file);
      proposal.summary.push({
        failure_type: 'reference_unread',
        count: total(kind),
        description: `answers about ${TOPICS[kind].plural} miss rules, and SKILL.md never says when to open ${file}`,
      });
      continue;
    }
    const content: string[] = [];
    const deletes: Edit[] = [];
    const misses = [...opts.misses.get(kind)!].sort((a, b) => b[1].count - a[1].count || a[0].localeCompare(b[0]));
    for (const [id, { count, lapse }] of misses) {
      const rule = CONVENTIONS.find((c) => c.id === id)!;
      const line = lapse ? homeLine(lines, id, kind) : undefined;
      if (line) {
        if (!content.includes(line)) content.push(line);
        const staying = lines.filter((l) => !deleted.has(l));
        if (!deleted.has(line) && movable(line, staying, kind, written)) {
          deleted.add(line);
          deletes.push(deletion(skill, line));
        }
        proposal.summary.push({
          failure_type: 'rule_overlooked',
          count,
          description: `SKILL.md states the ${id} convention but answers about ${TOPICS[kind].plural} overlook it: moved to ${file}`,
        });
        continue;
      }
      const choices = fresh(rule.rules);
      const wording = rng.chance(opts.vague) ? rng.pick(rule.vague) : rng.pick(choices.length ? choices : rule.rules);
      content.push(`- ${wording}`);
      proposal.summary.push({
        failure_type: 'rule_missing',
        count,
        description: `answers about ${TOPICS[kind].plural} miss the ${id} convention: stated in ${file}`,
      });
    }
    written.set(kind, new Set(content.flatMap((l) => [...recognise(l).conventions])));
    const text = content.every((l) => l.startsWith('- ')) ? content.join('\n') : content.join('\n\n');
    if (exists.has(file)) proposal.edits.push({ op: 'append', file, content: text });
    else {
      const title = TOPICS[kind].plural.replace(/^./, (c) => c.toUpperCase());
      proposal.edits.push({ op: 'create_file', file, content: `# ${title}\n\n${text}\n` });
      exists.add(file);
    }
    proposal.touched.push(file);
    if (!pointed.has(kind)) point(kind, file);
    proposal.edits.push(...deletes);
  }
  if (repeated && !deleted.has(repeated)) {
    proposal.edits.push(deletion(skill, repeated));
    proposal.summary.push({
      failure_type: 'rule_repeated',
      count: 1,
      description: 'SKILL.md repeats a rule its references hold, and a long SKILL.md gets overlooked',
    });
  }
  return proposal;
}

/**
 * Where a misstep of the analyst goes in a package: into a reference the package has (one it
 * writes to first), or (for a harmful one) the deletion of a reference `SKILL.md` points to, or
 * else `SKILL.md`.
 */
export function misstep(
  content: string,
  harmful: boolean,
  ctx: { skill: string; files: FileListing; touched: string[] },
  rng: Rng,
): Edit {
  const draw = rng.float();
  // A file the package has already, so that the append finds it wherever it lands in the patch.
  const existing = (path: string) => ctx.files.get(path) === 'text';
  const into = ctx.touched.find(existing) ?? [...ctx.files.keys()].find(existing);
  if (draw < 1 / 3 && into) return { op: 'append', file: into, content };
  const pointed = [...pointedFiles(ctx.skill, ctx.files).values()].find((f) => ctx.files.has(f));
  if (harmful && draw < 2 / 3 && pointed) return { op: 'delete_file', file: pointed };
  return { op: 'append', content };
}
