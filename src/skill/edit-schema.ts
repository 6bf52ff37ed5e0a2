/** An edit and its report, as the optimizer writes the one and the apply gives the other (the original's JSON, and the package's file field). */
import { z } from 'zod';

export const EditSchema = z
  .object({
    op: z.string().default('append'),
    /** The file the edit is for, a path inside the package; absent: `SKILL.md`. */
    file: z.string().optional(),
    target: z.string().optional(),
    content: z.string().optional(),
    /** With `set_description`: the skill's new `when_to_use`, which Claude Code lists after the description ('' removes it). */
    when_to_use: z.string().optional(),
    // Bookkeeping fields a model may get wrong: a bad value is dropped, not fatal to the reply.
    support_count: z.coerce.number().optional().catch(undefined),
    source_type: z.enum(['failure', 'success']).optional().catch(undefined),
    merge_level: z.coerce.number().optional().catch(undefined),
    reflection_type: z.string().optional().catch(undefined),
  })
  .loose();
export type Edit = z.infer<typeof EditSchema>;

export type EditStatus =
  | 'applied_append'
  | 'applied_append_before_protected_region'
  | 'applied_insert_after'
  | 'applied_insert_after_fallback_append'
  | 'applied_insert_after_fallback_before_protected_region'
  | 'applied_replace'
  | 'applied_delete'
  | 'applied_create_file'
  | 'applied_delete_file'
  | 'applied_set_description'
  | 'skipped_protected_region'
  | 'skipped_replace_missing_target'
  | 'skipped_replace_target_not_found'
  | 'skipped_delete_missing_target'
  | 'skipped_delete_target_not_found'
  | 'skipped_empty_content'
  | 'skipped_overlapping_edit'
  | 'skipped_length_limit'
  | 'skipped_unknown_op'
  /** `file` is not a plain relative path inside the package, or a new file clashes with a folder. */
  | 'skipped_bad_path'
  /** The file is not in the package (or is a folder). */
  | 'skipped_missing_file'
  /** A text edit into a binary file, or a new file whose content is not text. */
  | 'skipped_binary_file'
  /** `create_file` where a file is (case aside): change it, or delete it first. */
  | 'skipped_file_exists'
  /** `delete_file` of `SKILL.md`. */
  | 'skipped_protected_file'
  /** A description over the Agent Skills limits, or a skill with no front matter to hold one. */
  | 'skipped_bad_description'
  /** A file op on a skill that is one document, not a package. */
  | 'skipped_single_document'
  | 'error';

export interface EditReport {
  /** 1-based position in the patch. */
  index: number;
  op: string;
  /** The file the edit named, as it named it; absent when it named none (`SKILL.md`). */
  file?: string;
  target: string;
  content_preview: string;
  status: EditStatus;
  /** How the target was found, when it was. */
  match?: 'exact' | 'whitespace';
  /** Why an edit was skipped or failed, in words. */
  reason?: string;
}

export interface ApplyOptions {
  /** Largest skill allowed, in tokens (0 or undefined = no limit). */
  maxTokens?: number;
  /** Whether edits may change the skill's YAML front matter (default: protected). */
  frontMatter?: 'protected' | 'editable';
}
