/**
 * SpreadsheetBench's scoring: the target's script is run on every test case of the item and each
 * output compared with its golden workbook over the answer position; the first failure is named
 * in the original's words.
 */
import type { AgentTrace } from '../../model/harness/trace.ts';
import type { Usage } from '../../model/types.ts';
import type { ConversationEntry, Item, Trajectory } from '../types.ts';
import type { TestCase } from './cases.ts';
import { clipMiddle, verificationReport, type CaseOutcome } from './report.ts';
import { runScript, type RunLimits, type ScriptRun } from './sandbox.ts';
import { compareOutputs, type CaseCheck } from './workbooks.ts';

/** Where and how the scripts run. */
export interface ScriptRunner {
  python: string;
  limits: RunLimits;
  signal?: AbortSignal;
}

/** What the target produced, before it is scored. */
export interface Attempt {
  system: string;
  user: string;
  code: string;
  /** Why there is no code to score ('empty-code-block', 'no-solution-py'). */
  noCode?: string;
  conversation: ConversationEntry[];
  usage: Usage;
  turns: number;
  notes: string[];
  /** An agent target's trace. */
  traces?: AgentTrace[];
  /** The final code's run on case 1 (and its check), made during the turns: reused for scoring. */
  caseOne?: { code: string; run: ScriptRun & { output: string }; check?: CaseCheck };
}

/** An item with its cases resolved. */
export interface SheetItem extends Item {
  instruction: string;
  instruction_type: string;
  answer_position: string;
  cases: TestCase[];
}

/** Runs the code on every case, compares each output with its golden workbook, and builds the trajectory. */
export async function scoreAttempt(
  item: SheetItem,
  attempt: Attempt,
  scratch: string,
  runner: ScriptRunner,
): Promise<Trajectory> {
  const outcomes: CaseOutcome[] = [];
  if (!attempt.noCode) {
    const runs = await Promise.all(
      item.cases.map((c, i) => {
        const reuse = i === 0 && attempt.caseOne?.code === attempt.code ? attempt.caseOne : undefined;
        return reuse
          ? Promise.resolve(reuse.run)
          : runScript(runner.python, attempt.code, c.input, scratch, runner.limits, runner.signal);
      }),
    );
    const toCompare = item.cases.map((c, i) => ({ c, i, run: runs[i]! })).filter(({ run }) => run.ok);
    const known = attempt.caseOne?.code === attempt.code ? attempt.caseOne.check : undefined;
    const fresh = toCompare.filter(({ i }) => !(i === 0 && known));
    const checks = await compareOutputs(
      runner.python,
      item.answer_position,
      fresh.map(({ c, run }) => ({ no: c.no, pred: run.output, gold: c.gold })),
    );
    const checkOf = new Map<number, CaseCheck>(fresh.map(({ i }, k) => [i, checks[k]!]));
    if (known) checkOf.set(0, known);
    item.cases.forEach((c, i) => {
      const run = runs[i]!;
      outcomes.push(
        run.ok ? { no: c.no, check: checkOf.get(i)! } : { no: c.no, runFailure: run.failure, runLog: run.log },
      );
    });
  }
  const passed = outcomes.filter((o) => o.check?.ok).length;
  const total = item.cases.length;
  const hard = total > 0 && passed === total ? 1 : 0;
  const soft = total > 0 ? passed / total : 0;
  const report = attempt.noCode
    ? '[POST-EXECUTION VERIFICATION]\nNo script to run: the target left no code.'
    : verificationReport(outcomes);
  const reason = hard ? undefined : failReason(attempt, outcomes);
  const feedback = [
    `${passed} of ${total} test case${total === 1 ? '' : 's'} passed (${attempt.turns} model call${attempt.turns === 1 ? '' : 's'})`,
    ...attempt.notes,
  ].join('\n');
  return {
    id: item.id,
    hard,
    soft,
    taskType: item.type ?? 'other',
    task: item.instruction,
    predicted: attempt.code,
    expected: `the golden workbook's values at ${item.answer_position}`,
    ...(reason ? { failReason: reason } : {}),
    feedback,
    conversation: [...attempt.conversation, { role: 'system', content: report }],
    systemPrompt: attempt.system,
    userPrompt: attempt.user,
    usage: attempt.usage,
    ...(attempt.traces ? { traces: attempt.traces } : {}),
  };
}

/** The first failure, in the original's words (its prefix groups failures into patterns). */
function failReason(attempt: Attempt, outcomes: CaseOutcome[]): string {
  if (attempt.noCode) return attempt.noCode;
  for (const o of outcomes) {
    if (o.runFailure) {
      if (/without writing the output workbook/.test(o.runFailure)) return 'output-not-found';
      const printed = (o.runLog ?? '')
        .split('\n')
        .filter((l) => l.trim() && !/^\[.*\]$/.test(l.trim()))
        .at(-1)
        ?.trim();
      const stopped = /^stopped/.test(o.runFailure);
      return `exec-error: ${printed ? `${clipMiddle(printed, 200)}${stopped ? ` (${o.runFailure})` : ''}` : o.runFailure}`;
    }
    if (o.check && !o.check.ok) return `eval-mismatch: ${o.check.reason.slice(0, 200)}`;
  }
  return 'eval-mismatch';
}
