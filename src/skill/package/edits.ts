/**
 * A patch applied to a skill package, edit by edit, each to the result of the one before, with
 * a report per edit. This is where every op is dispatched; a single document is a package with
 * no other files (`applyEdits` in `../edits.ts`).
 *
 * - The four text ops take `file`, a path inside the package; without it they edit `SKILL.md`,
 *   so edits written before packages apply as they always did. `SKILL.md`'s front matter is
 *   protected (unless made editable); the protected regions are honoured in every text file.
 * - `create_file` writes a new text file: mode 0755 when its content starts with `#!` (a
 *   script), else 0644. It does not overwrite: a file at that path is changed with the text ops,
 *   or deleted first. `delete_file` removes any file but `SKILL.md`, binary ones included.
 * - Refused, with the reason in the report: a path that is not a plain relative path inside the
 *   package, a text edit into a binary file, a missing file, a new file whose path clashes with
 *   a file or folder already there (case aside, as some file systems ignore it).
 * - Limits: `maxTokens` bounds `SKILL.md`, `maxPackageTokens` the text of all text files together
 *   (the sum of each file's tokens); an edit that would grow the text past either is skipped.
 */
import { countTokens } from '../document.ts';
import {
  afterChange,
  editText,
  isTextOp,
  TEXT_OPS,
  type TextChange,
  type TextOp,
  type TextSkip,
} from '../edit-text.ts';
import type { ApplyOptions, Edit, EditReport, EditStatus } from '../edit-schema.ts';
import { DESCRIPTION_OP, withDescription } from '../description.ts';
import { stripMarkers, type Span } from '../regions.ts';
import { DEFAULT_MODE, type PackageFile, packagePathProblem, type SkillPackage, SKILL_FILE } from './package.ts';

/** The ops on a package's files as wholes. */
export const FILE_OPS = ['create_file', 'delete_file'] as const;
export const EDIT_OPS = [...TEXT_OPS, ...FILE_OPS, DESCRIPTION_OP] as const;
export type EditOp = (typeof EDIT_OPS)[number];

/** The mode of a file a patch creates that is a script (its content starts with `#!`). */
export const SCRIPT_MODE = 0o755;

export interface PackageApplyOptions extends ApplyOptions {
  /** Largest total of the package's text, in tokens (0 or undefined = no limit). */
  maxPackageTokens?: number;
  /**
   * The skill is one document and stays one: `create_file` and `delete_file` are skipped
   * (`skipped_single_document`).
   */
  singleDocument?: boolean;
  /** `set_description` applies only when the step trains the description (`train.targets`); otherwise it is skipped. */
  description?: 'editable' | 'protected';
}

export interface PackageApplyResult {
  package: SkillPackage;
  reports: EditReport[];
}

type Skip = TextSkip;
const skip = (status: EditStatus, reason: string): Skip => ({ status, reason });

/** A patch's working copy of the package: the texts, what the patch wrote in each, their tokens. */
class Draft {
  skill: string;
  readonly files: Map<string, PackageFile>;
  readonly touched = new Map<string, Span[]>();
  descriptionSet = false;
  private tokens?: Map<string, number>;

  constructor(pkg: SkillPackage) {
    this.skill = pkg.skill;
    this.files = new Map(pkg.files ?? []);
  }

  text(path: string): string | undefined {
    if (path === SKILL_FILE) return this.skill;
    const file = this.files.get(path);
    return file?.kind === 'text' ? file.text : undefined;
  }

  /** The package's text tokens were `path` to hold `text` (counted once, then kept up to date). */
  totalTokensWith(path: string, text: string): number {
    if (!this.tokens) {
      this.tokens = new Map([[SKILL_FILE, countTokens(this.skill)]]);
      for (const [p, f] of this.files) if (f.kind === 'text') this.tokens.set(p, countTokens(f.text));
    }
    let total = countTokens(text);
    for (const [p, n] of this.tokens) if (p !== path) total += n;
    return total;
  }

  setText(path: string, text: string, mode?: number): void {
    if (path === SKILL_FILE) this.skill = text;
    else this.files.set(path, { kind: 'text', text, mode: mode ?? this.files.get(path)?.mode ?? DEFAULT_MODE });
    this.tokens?.set(path, countTokens(text));
  }

  remove(path: string): void {
    this.files.delete(path);
    this.touched.delete(path);
    this.tokens?.delete(path);
  }

  result(): SkillPackage {
    return this.files.size > 0 ? { skill: this.skill, files: this.files } : { skill: this.skill };
  }
}

/** Why a new file cannot go at `path`, given the files there: a clash with a file or a folder. */
function clash(path: string, draft: Draft): Skip | undefined {
  const paths = [SKILL_FILE, ...draft.files.keys()];
  if (paths.includes(path)) {
    return skip(
      'skipped_file_exists',
      `'${path}' exists; change it with append, insert_after, replace or delete, or delete_file it first`,
    );
  }
  const lower = path.toLowerCase();
  for (const p of paths) {
    const other = p.toLowerCase();
    if (other === lower) {
      return skip(
        'skipped_file_exists',
        `'${path}' differs from the file '${p}' only in case: one file where case is ignored`,
      );
    }
    if (lower.startsWith(`${other}/`)) return skip('skipped_bad_path', `'${path}' runs through the file '${p}'`);
    if (other.startsWith(`${lower}/`)) return skip('skipped_bad_path', `'${path}' is a folder of the package`);
  }
  return undefined;
}

/** The file a file op names, or why it names none. */
function fileOpPath(edit: Edit): string | Skip {
  const path = edit.file ?? '';
  if (!path) return skip('skipped_bad_path', `${edit.op} needs \`file\`, the path of the file in the package`);
  if (path === SKILL_FILE) return path;
  const problem = packagePathProblem(path);
  return problem ? skip('skipped_bad_path', problem) : path;
}

function createFile(draft: Draft, edit: Edit, options: PackageApplyOptions): { status: EditStatus } | Skip {
  const path = fileOpPath(edit);
  if (typeof path !== 'string') return path;
  const refused = clash(path, draft);
  if (refused) return refused;
  const content = stripMarkers(edit.content ?? '');
  if (!content.trim()) return skip('skipped_empty_content', 'nothing to write in the new file');
  if (content.includes('\0'))
    return skip('skipped_binary_file', 'the content holds a NUL byte: a patch writes text files only');
  const limited = overPackageLimit(draft, path, content, options);
  if (limited) return limited;
  draft.setText(path, content, content.startsWith('#!') ? SCRIPT_MODE : DEFAULT_MODE);
  draft.touched.set(path, [{ start: 0, end: content.length }]);
  return { status: 'applied_create_file' };
}

function deleteFile(draft: Draft, edit: Edit): { status: EditStatus } | Skip {
  const path = fileOpPath(edit);
  if (typeof path !== 'string') return path;
  if (path === SKILL_FILE)
    return skip('skipped_protected_file', `${SKILL_FILE} is the skill itself: it can be edited, not deleted`);
  if (!draft.files.has(path)) return skip('skipped_missing_file', missingFile(path, draft));
  draft.remove(path);
  return { status: 'applied_delete_file' };
}

function missingFile(path: string, draft: Draft): string {
  const folder = [...draft.files.keys()].some((p) => p.startsWith(`${path}/`));
  return folder ? `'${path}' is a folder; name one of its files` : `the package has no file '${path}'`;
}

function overPackageLimit(draft: Draft, path: string, text: string, options: PackageApplyOptions): Skip | undefined {
  const limit = options.maxPackageTokens ?? 0;
  if (limit <= 0) return undefined;
  const tokens = draft.totalTokensWith(path, text);
  if (tokens <= limit) return undefined;
  return skip('skipped_length_limit', `the package's text would grow to ${tokens} tokens, over the limit of ${limit}`);
}

function textEdit(draft: Draft, op: TextOp, edit: Edit, options: PackageApplyOptions): TextChange | TextSkip {
  const path = edit.file || SKILL_FILE;
  if (path !== SKILL_FILE) {
    const problem = packagePathProblem(path);
    if (problem) return skip('skipped_bad_path', problem);
    const file = draft.files.get(path);
    if (!file) return skip('skipped_missing_file', missingFile(path, draft));
    if (file.kind === 'binary')
      return skip('skipped_binary_file', `'${path}' is a binary file: it is carried as it is, never edited`);
  }
  const current = draft.text(path)!;
  const isSkill = path === SKILL_FILE;
  const result = editText(current, op, edit, draft.touched.get(path) ?? [], {
    guardFrontMatter: isSkill && options.frontMatter !== 'editable',
    name: isSkill ? 'the skill' : `'${path}'`,
  });
  if (!('text' in result)) return result;
  if (result.text.length > current.length) {
    const limit = options.maxTokens ?? 0;
    if (isSkill && limit > 0) {
      const tokens = countTokens(result.text);
      if (tokens > limit)
        return skip('skipped_length_limit', `the skill would grow to ${tokens} tokens, over the limit of ${limit}`);
    }
    const limited = overPackageLimit(draft, path, result.text, options);
    if (limited) return limited;
  }
  commit(draft, path, current, result);
  return result;
}

function setDescription(draft: Draft, edit: Edit, options: PackageApplyOptions): { status: EditStatus } | Skip {
  if (options.description !== 'editable')
    return skip(
      'skipped_protected_region',
      'the description is trained in description steps only (train.targets); this step edits the body',
    );
  if (edit.file && edit.file !== SKILL_FILE)
    return skip('skipped_bad_path', `the description is in ${SKILL_FILE}'s front matter, not in '${edit.file}'`);
  if (draft.descriptionSet)
    return skip('skipped_overlapping_edit', 'an earlier edit of this patch set the description');
  const result = withDescription(draft.skill, edit.content ?? '', edit.when_to_use);
  if ('problem' in result) return skip('skipped_bad_description', result.problem);
  // The body's text moves by the front matter's change: spans an earlier edit wrote move with it.
  const shift = result.text.length - draft.skill.length;
  const spans = draft.touched.get(SKILL_FILE);
  if (spans)
    draft.touched.set(
      SKILL_FILE,
      spans.map((sp) => ({ start: sp.start + shift, end: sp.end + shift })),
    );
  draft.setText(SKILL_FILE, result.text);
  draft.descriptionSet = true;
  return { status: 'applied_set_description' };
}

function commit(draft: Draft, path: string, before: string, change: TextChange): void {
  draft.touched.set(path, afterChange(draft.touched.get(path) ?? [], change, change.text.length - before.length));
  draft.setText(path, change.text);
}

function applyOne(
  draft: Draft,
  edit: Edit,
  options: PackageApplyOptions,
): { status: EditStatus; match?: TextChange['match'] } | Skip {
  const op = String(edit.op ?? '');
  if (isTextOp(op)) return textEdit(draft, op, edit, options);
  if (op === DESCRIPTION_OP) return setDescription(draft, edit, options);
  if (op !== 'create_file' && op !== 'delete_file')
    return skip('skipped_unknown_op', `unknown op '${op}' (expected one of ${EDIT_OPS.join(', ')})`);
  if (options.singleDocument) {
    return skip(
      'skipped_single_document',
      `${op} needs a skill package (a folder with ${SKILL_FILE}); this skill is a single document`,
    );
  }
  return op === 'create_file' ? createFile(draft, edit, options) : deleteFile(draft, edit);
}

/** Applies the edits in order, each to the result of the previous one; `pkg` itself is not changed. */
export function applyPackageEdits(
  pkg: SkillPackage,
  edits: Edit[],
  options: PackageApplyOptions = {},
): PackageApplyResult {
  const draft = new Draft(pkg);
  const reports = edits.map((edit, i): EditReport => {
    const base = {
      index: i + 1,
      op: String(edit.op ?? ''),
      ...(edit.file ? { file: edit.file.slice(0, 200) } : {}),
      target: (edit.target ?? '').slice(0, 200),
      content_preview: stripMarkers(edit.content ?? '')
        .trim()
        .slice(0, 200),
    };
    try {
      const result = applyOne(draft, edit, options);
      if ('reason' in result) return { ...base, status: result.status, reason: result.reason };
      return { ...base, status: result.status, ...(result.match ? { match: result.match } : {}) };
    } catch (err) {
      return { ...base, status: 'error', reason: err instanceof Error ? err.message : String(err) };
    }
  });
  return { package: draft.result(), reports };
}
