/**
 * What a step's action (history.json's `action`) means, in words: the console and the stage
 * details say these; `--verbose` adds the codes as the records hold them.
 */

export const STEP_ACTION_WORDS: Record<string, string> = {
  accept_new_best: 'accepted, the new best',
  accept: 'accepted',
  reject: 'rejected',
  force_accept: 'accepted (the gate is off)',
  skip_no_patches: 'skipped: no analyst proposed an edit',
  skip_no_rewrite: 'skipped: the rewrite gave no usable skill',
  skip_no_change: 'skipped: the selected changes left the skill as it was',
  skip_invalid_package:
    'skipped: the edits broke the package (a script, a data file or a link), so it was never scored',
  skip_audit: 'skipped: the audit rejected the candidate (it carries items of the data), so it was never scored',
  reject_audit:
    'rejected by the audit: the gate accepted, but the gain vanished under a second scorer or on recast items',
};
