/**
 * What the checks of a SpreadsheetBench item say, in words: the code taken from a reply, the
 * verification report the optimizer reads (the value each answer cell got and the golden one),
 * and the feedback a training rollout gives the target in `multi` mode (which cells are wrong,
 * with its own values only: never a golden value).
 */
import { envPrompt } from '../prompts.ts';
import { render } from '../template.ts';
import type { CaseCheck } from './workbooks.ts';

/**
 * The script in a reply: its first ```python (or ```py) block, else its first fenced block, else
 * the whole reply (as the official harness takes it).
 */
export function extractCode(reply: string): string {
  const fences = [...reply.matchAll(/```([^\n`]*)\n([\s\S]*?)```/g)];
  const python = fences.find((m) => /^\s*(python3?|py)\s*$/i.test(m[1]!));
  const chosen = python ?? fences[0];
  if (chosen) return chosen[2]!.trim();
  // An opening fence without its end: take what follows it.
  const open = /```[^\n`]*\n([\s\S]*)$/.exec(reply);
  return (open ? open[1]! : reply).trim();
}

/** One test case of a scored item: how the script ran on it and what the comparison found. */
export interface CaseOutcome {
  no: string;
  /** Why the script did not produce the output on this case (then there is no check). */
  runFailure?: string;
  runLog?: string;
  check?: CaseCheck;
}

export const REPORT_MAX_CHARS = 12_000;

/** Long text kept at both ends, so the first and the last lines stay in view. */
export function clipMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n  … [${text.length - max} characters left out] …\n${text.slice(-half)}`;
}

function cellLines(check: CaseCheck): string[] {
  const lines = check.cells.map((c) => `  ${c.ref}: got=${c.got}, expected=${c.expected} ${c.ok ? '✓' : '✗'}`);
  if (check.empty_ok) lines.push(`  (+${check.empty_ok} cells empty in both, correct, not listed)`);
  const more = [
    check.unlisted_ok ? `${check.unlisted_ok} more correct` : '',
    check.unlisted_wrong ? `${check.unlisted_wrong} more wrong` : '',
  ].filter(Boolean);
  if (more.length) lines.push(`  (+${more.join(', ')} cells not listed)`);
  if (check.formulas.length) {
    lines.push(
      '  These wrong cells hold a formula with no saved value (the comparison reads saved values, so they count as empty):',
    );
    for (const f of check.formulas) lines.push(`    ${f}`);
  }
  return lines;
}

/** The report the optimizer reads: each case passed or failed, and why, cell by cell. */
export function verificationReport(outcomes: CaseOutcome[]): string {
  const parts = outcomes.map((o) => {
    if (o.runFailure)
      return [
        `Case ${o.no}: FAIL, the script did not run through: ${o.runFailure}`,
        ...(o.runLog ? [clipMiddle(o.runLog, 1500).replace(/^/gm, '  ')] : []),
      ].join('\n');
    const check = o.check!;
    return [`Case ${o.no}: ${check.ok ? 'PASS' : `FAIL, ${check.reason}`}`, ...cellLines(check)].join('\n');
  });
  return clipMiddle(['[POST-EXECUTION VERIFICATION]', ...parts].join('\n'), REPORT_MAX_CHARS);
}

/** Feedback to the target on a wrong output: the wrong cells with its own values, never the golden ones. */
export function wrongCellsFeedback(check: CaseCheck): string {
  const wrong = check.cells.filter((c) => !c.ok).map((c) => `  ${c.ref}: your value = ${c.got} (wrong)`);
  if (check.unlisted_wrong) wrong.push(`  (${check.unlisted_wrong} more wrong cells)`);
  if (wrong.length === 0) wrong.push(`  ${check.reason.replace(/, expected .*$/, '')}`);
  const right = check.cells.filter((c) => c.ok).length + check.unlisted_ok + check.empty_ok;
  if (right) wrong.push(`  (${right} other cell${right === 1 ? ' is' : 's are'} correct)`);
  return render(envPrompt('spreadsheetbench', 'feedback_wrong'), { cells: wrong.join('\n') });
}
