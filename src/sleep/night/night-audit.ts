/**
 * The audit of a night's proposals before they are staged (`consolidate.audit`): a document that
 * carries the night's tasks (their requests copied, their reference answers) is not staged; one
 * that mirrors what the tasks' rule judges check is flagged in the report.
 */
import { type AuditReport, auditRecord, describeReport, SkillLint } from '../../audit/audit.ts';
import type { AuditItem } from '../../audit/items.ts';
import type { AuditConfig } from '../../config/audit-schema.ts';
import { regexLiterals } from '../../envs/scoring/scorer-checks.ts';
import type { AuditRecord } from '../../run/audit-records.ts';
import { checksOf, type TaskRecord } from '../tasks/task.ts';

const checkArgs = (t: TaskRecord, ops: string[]): string[] =>
  checksOf(t).flatMap((c) => {
    const { op, arg } = (c ?? {}) as { op?: unknown; arg?: unknown };
    return typeof op === 'string' && ops.includes(op) && typeof arg === 'string' && arg.trim() ? [arg.trim()] : [];
  });

/** The texts a rule judge rewards beyond a task's answer: the sections it wants, a pattern's literal parts. */
function judgeChecks(tasks: readonly TaskRecord[]): string[] {
  const out = new Set<string>();
  for (const t of tasks) {
    for (const arg of checkArgs(t, ['section_present', 'section_contains'])) if (arg.length >= 4) out.add(arg);
    for (const arg of checkArgs(t, ['regex'])) for (const l of regexLiterals(arg)) out.add(l);
  }
  return [...out];
}

/** A task's answers: its exact reference, and the text a rule judge wants the answer to contain. */
const answersOf = (t: TaskRecord): string[] => [
  ...(t.reference_kind === 'exact' && t.reference.trim() ? [t.reference] : []),
  ...checkArgs(t, ['contains']),
];

export function nightLint(config: AuditConfig, tasks: readonly TaskRecord[]): SkillLint | undefined {
  const checks = config.checks.filter((c) => c !== 'sealed_test');
  if (checks.length === 0) return undefined;
  const items: AuditItem[] = tasks.map((t) => ({
    id: t.id,
    split: t.split,
    input: t.intent,
    answers: answersOf(t),
  }));
  return new SkillLint(items, judgeChecks(tasks), { checks, onFlag: config.on_flag, onFail: config.on_fail });
}

/** A proposal's audit against the document as it was: what the report keeps, and whether it may be staged. */
export function auditProposal(
  lint: SkillLint | undefined,
  before: string,
  proposed: string,
): { record: AuditRecord; findings: string[]; rejects: boolean } | undefined {
  if (!lint || before === proposed) return undefined;
  const report: AuditReport = lint.lint({ skill: proposed }, { skill: before });
  return { record: auditRecord(report), findings: describeReport(report), rejects: lint.rejects(report) };
}
