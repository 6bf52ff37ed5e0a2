/**
 * The console's words for the codes of the trainer's records: what a step's action means, and
 * the engine's stage details (`gate[hard]=`, `batch_seed=`, `lr_control=`, …) reworded for a
 * reader who does not know the code. `--verbose` prints the codes as the records hold them. The
 * details are written by src/engine; their rewording here lasts until the engine says them so.
 */

/** What a step's action (history.json's `action`) means. */
export const STEP_ACTION_WORDS: Record<string, string> = {
  accept_new_best: 'accepted, the new best',
  accept: 'accepted',
  reject: 'rejected',
  force_accept: 'accepted (the gate is off)',
  skip_no_patches: 'skipped: no analyst proposed an edit',
  skip_no_rewrite: 'skipped: the rewrite gave no usable skill',
};

/** The engine's stage details and step headers, code → words. */
const DETAIL_WORDS: [RegExp, string | ((...groups: string[]) => string)][] = [
  // The rollout's batch seed says nothing a reader can use (history.json keeps it).
  [/ \(batch_seed=[\d,]+\)/, ''],
  [/ gate\[(\w+)\]=/, ', gate score ($1)='],
  [/^failure_patches=(\d+) success_patches=(\d+)$/, '$1 patches from failures, $2 from successes'],
  // The learning rate's budget; its control mode (`fixed` even for a cosine schedule: the budget
  // is fixed before the step) is the record's, not the reader's.
  [/ \(budget=(\d+), lr_control=\w+\)/, ' (at most $1 this step)'],
  [/ \(budget=none, lr_control=\w+\)/, ' (no limit: a rewrite)'],
  [/^skill_len (\d+) -> (\d+)$/, 'skill $1 -> $2 characters'],
  [/^(\[STEP \d+\/\d+\] epoch=\d+) step_in_epoch=\d+/, '$1'],
  [
    /^(accept_new_best|accept|reject|force_accept): /,
    (_m: string, action: string) => `${STEP_ACTION_WORDS[action] ?? action}: `,
  ],
];

/** A stage's detail or a step's header in words (unchanged when `verbose`). */
export function plainDetail(text: string, verbose = false): string {
  if (verbose) return text;
  let out = text;
  for (const [code, words] of DETAIL_WORDS) out = out.replace(code, words as string);
  return out;
}
