/**
 * Progressive disclosure in the simulated world: the target reads `SKILL.md`, and opens one of
 * the package's other text files only for a task of a kind that a sentence of `SKILL.md` names
 * together with the file and a verb of opening ("For dates, read references/dates.md."). A
 * sentence that names the file but not when to open it ("More is in references/dates.md.") opens
 * nothing. A simulation: see `world.ts`.
 */
import type { PackageFiles } from '../../skill/package/package.ts';
import { KINDS, OPEN_VERBS, TOPICS, type Kind } from './rules.ts';

/** Whether `path` has the shape of a Markdown file's path in a package ("references/dates.md"). */
export const isMarkdownPath = (path: string) => /^(?:[\w-]+\/)*[\w-]+\.md$/.test(path);

/** A sentence that sends the reader to `files` for tasks of `kinds`. */
export interface Pointer {
  files: string[];
  kinds: Kind[];
}

/** The path-like words of a sentence, as written ("./a.md" is "a.md"; a closing full stop is not part of it). */
function pathWords(sentence: string): string[] {
  return [...sentence.matchAll(/[\w./-]+/g)].map((m) => m[0].replace(/^\.\//, '').replace(/\.+$/, ''));
}

/**
 * The pointers of `text`: sentences (or clauses between semicolons) with a verb of opening, the
 * words of at least one kind, and a word that `isFile` takes for a file. The file's own name does
 * not count as naming a kind.
 */
export function pointersIn(text: string, isFile: (path: string) => boolean): Pointer[] {
  const pointers: Pointer[] = [];
  for (const sentence of text.split(/\n|;|(?<=[.!?])\s+/)) {
    const files = [...new Set(pathWords(sentence).filter(isFile))];
    if (files.length === 0) continue;
    let rest = sentence;
    for (const f of files) rest = rest.split(f).join(' ');
    if (!OPEN_VERBS.test(rest)) continue;
    const kinds = KINDS.filter((k) => TOPICS[k].recognise.test(rest));
    if (kinds.length) pointers.push({ files, kinds });
  }
  return pointers;
}

/** The text files of the package that `skill` says to open for a task of `kind`, in the order it names them. */
export function opensFor(kind: Kind, skill: string, files: PackageFiles): string[] {
  const isText = (path: string) => files.get(path)?.kind === 'text';
  return [...new Set(pointersIn(skill, isText).flatMap((p) => (p.kinds.includes(kind) ? p.files : [])))];
}
