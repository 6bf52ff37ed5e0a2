/**
 * Edits of a skill in the original's JSON format: the schema, the statuses an edit can end with,
 * and the report per edit. The four text ops (`append`, `insert_after`, `replace`, `delete`)
 * change a text file, `SKILL.md` unless the edit names another `file`; `create_file` and
 * `delete_file` add and remove files of a package. How each op applies: `edit-text.ts` for the
 * text of one file, `package/edits.ts` for a patch over a package (the one place ops are
 * dispatched); a single document is a package with no other files.
 */
import { applyPackageEdits } from './package/edits.ts';
import type { ApplyOptions, Edit, EditReport, EditStatus } from './edit-schema.ts';

export { EDIT_OPS, type EditOp } from './package/edits.ts';
export * from './edit-schema.ts';

export interface ApplyResult {
  skill: string;
  reports: EditReport[];
}

export function isApplied(status: EditStatus): boolean {
  return status.startsWith('applied');
}

export function summariseReports(reports: EditReport[]): {
  total: number;
  applied: number;
  skipped: number;
  errors: number;
} {
  return {
    total: reports.length,
    applied: reports.filter((r) => isApplied(r.status)).length,
    skipped: reports.filter((r) => r.status.startsWith('skipped')).length,
    errors: reports.filter((r) => r.status === 'error').length,
  };
}

/** The edits of a patch that applied, in order. */
export function appliedEdits(edits: Edit[], reports: EditReport[]): Edit[] {
  return reports.filter((r) => isApplied(r.status)).map((r) => edits[r.index - 1]!);
}

/** Why edits were skipped, in words, with how many each: "2 target not found, 1 unknown op". */
export function skipReasons(reports: EditReport[]): string {
  const words: Partial<Record<EditStatus, string>> = {
    skipped_protected_region: 'in a protected region',
    skipped_replace_missing_target: 'no target',
    skipped_delete_missing_target: 'no target',
    skipped_replace_target_not_found: 'target not found',
    skipped_delete_target_not_found: 'target not found',
    skipped_empty_content: 'no content',
    skipped_overlapping_edit: 'overlaps an earlier edit',
    skipped_length_limit: 'over the token limit',
    skipped_unknown_op: 'unknown op',
    skipped_bad_path: 'bad path',
    skipped_missing_file: 'no such file',
    skipped_binary_file: 'binary file',
    skipped_file_exists: 'file exists',
    skipped_protected_file: 'SKILL.md cannot be deleted',
    skipped_single_document: 'not a package',
    skipped_bad_description: 'bad description',
    error: 'failed',
  };
  const counts = new Map<string, number>();
  for (const r of reports) {
    const word = words[r.status];
    if (word) counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return [...counts].map(([word, n]) => `${n} ${word}`).join(', ');
}

/**
 * Applies the edits to one document, in order, each to the result of the previous one: the
 * package path with no other files. `create_file` and `delete_file` are skipped
 * (`skipped_single_document`), and an edit naming another file finds none.
 */
export function applyEdits(skill: string, edits: Edit[], options: ApplyOptions = {}): ApplyResult {
  const result = applyPackageEdits({ skill }, edits, { ...options, singleDocument: true });
  return { skill: result.package.skill, reports: result.reports };
}
