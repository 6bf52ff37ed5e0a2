/**
 * A night's report: `report.json` (every figure) and `report.md` (for a person: what was mined,
 * what each document's gate decided and why, the task-by-task changes on the val tasks, the
 * edits taken and refused, and how to adopt). Text that came from transcripts or models is shown
 * on one line, control characters removed and Markdown escaped, so it cannot forge the report.
 */
import type { AuditRecord } from '../../run/audit-records.ts';
import type { Consolidation, SplitScore } from '../night/consolidate.ts';
import type { TaskRecord } from '../tasks/task.ts';

export interface DocumentReport extends Omit<Consolidation, 'candidateText' | 'proposedText'> {
  kind: 'skill' | 'memory';
  live_path: string;
  /** Staged for adoption (accepted, changed, and passed by the audit). */
  staged: boolean;
  /** The audit of the proposal: the verdicts, and a line per finding. */
  audit?: AuditRecord & { findings: string[] };
}

export interface NightReport {
  night: number;
  project: string;
  started_at: string;
  ended_at: string;
  backend: string;
  window: string;
  n_sessions: number;
  miner: 'model' | 'heuristic' | 'tasks file';
  n_tasks: number;
  splits: Record<'train' | 'val' | 'test', number>;
  gate_metric: string;
  documents: DocumentReport[];
  /** Why a fan-out skill was not trained. */
  skipped: { skill: string; reason: string }[];
  usage: { calls: number; input_tokens: number; output_tokens: number; cost_usd: number; unpriced_calls: number };
  notes: string[];
}

/** Untrusted text on one line: no control characters, Markdown and HTML specials escaped. */
export function safeLine(text: string, max = 300): string {
  const flat = text
    .replace(/\u001b\[[0-9;]*[A-Za-z]/g, '')
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const cut = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  return cut.replace(/[\\`*_[\]<>|#&]/g, (c) =>
    c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '&' ? '&amp;' : `\\${c}`,
  );
}

const score = (s: SplitScore | undefined) => (s ? s.gate.toFixed(3) : '—');
const num = (v: number | null) => (v === null ? '—' : v.toFixed(3));

const ACTION_WORDS: Record<string, string> = {
  accept_new_best: 'accepted: better on the val tasks',
  reject: 'rejected',
  reject_unverified: 'not validated (val overlapped train): shown as suggestions, not staged',
  greedy_applied: 'taken without the gate (gate off)',
  no_edits: 'no change',
  no_tasks: 'no tasks',
};

function documentSection(d: DocumentReport): string[] {
  const lines = [`## ${d.kind === 'skill' ? 'Skill' : 'Project notes'}: ${safeLine(d.document)}`, ''];
  lines.push(`- file: \`${safeLine(d.live_path)}\``);
  lines.push(
    `- decision: **${d.action}** (${ACTION_WORDS[d.action] ?? d.action})${d.staged ? ', staged for adoption' : ''}`,
  );
  if (d.reason) lines.push(`- why: ${safeLine(d.reason)}`);
  if (d.audit && d.audit.verdict !== 'pass') {
    lines.push(`- audit: **${d.audit.verdict}**`);
    for (const f of d.audit.findings) lines.push(`  - ${safeLine(f.trim())}`);
  }
  lines.push(`- tasks: ${d.nTrain} train, ${d.nVal} val`);
  if (d.train)
    lines.push(
      `- train tasks under the current document: hard ${d.train.hard.toFixed(3)}, soft ${d.train.soft.toFixed(3)}${d.train.errors ? ` (${d.train.errors} could not run)` : ''}`,
    );
  if (d.baseline || d.candidate) lines.push(`- val score: ${score(d.baseline)} → ${score(d.candidate)}`);
  if (d.test)
    lines.push(
      `- held-out test score (measured only): ${d.test.before.gate.toFixed(3)} → ${d.test.after.gate.toFixed(3)}`,
    );
  if (d.leaked)
    lines.push(
      '',
      '> **Not validated.** The val tasks were also train tasks (too few tasks to hold any out), so the gate could not tell whether the edits help. They are shown below as suggestions and are not staged.',
    );
  if (d.deltas.length) {
    lines.push('', '### Val tasks, before and after', '', '| Task | Before | After | Change |', '|---|---|---|---|');
    for (const t of d.deltas)
      lines.push(`| ${safeLine(t.task_id, 60)} | ${num(t.baseline)} | ${num(t.candidate)} | ${t.status} |`);
    lines.push('', '_Changes on single tasks are observations, not proof that one edit caused them._');
  }
  const applied = d.edits.filter((e) => e.status.startsWith('applied'));
  const refused = d.edits.filter((e) => !e.status.startsWith('applied'));
  if (applied.length) {
    const title = d.accepted
      ? 'Edits taken'
      : d.action === 'reject_unverified'
        ? 'Unverified suggestions'
        : 'Edits tried and rejected by the gate';
    lines.push('', `### ${title}`, '');
    for (const e of applied) lines.push(`- [${e.op}] ${safeLine(e.content || e.target)}`);
  }
  if (refused.length) {
    lines.push('', '### Edits that could not be applied', '');
    for (const e of refused)
      lines.push(`- [${e.op}] ${safeLine(e.content || e.target)} (${safeLine(e.reason ?? e.status)})`);
  }
  return lines;
}

export function renderReport(r: NightReport, tasks: TaskRecord[]): string {
  const staged = r.documents.filter((d) => d.staged);
  const lines = [
    `# SkillOpt-Sleep: night ${r.night}`,
    '',
    `- project: \`${safeLine(r.project || '(every project)')}\``,
    `- models: ${safeLine(r.backend)}`,
    `- sessions harvested: ${r.n_sessions} (${safeLine(r.window)})`,
    `- tasks: ${r.n_tasks} (${r.miner === 'model' ? 'mined by the model' : r.miner === 'heuristic' ? 'mined without a model' : 'from a tasks file'}): ${r.splits.train} train, ${r.splits.val} val, ${r.splits.test} test`,
    `- gate metric: ${r.gate_metric}`,
    `- spent: ${r.usage.calls} model calls, ${r.usage.input_tokens + r.usage.output_tokens} tokens, $${r.usage.cost_usd.toFixed(4)}${r.usage.unpriced_calls ? ` (plus ${r.usage.unpriced_calls} calls of unknown price)` : ''}`,
    '',
  ];
  for (const d of r.documents) lines.push(...documentSection(d), '');
  if (r.skipped.length) {
    lines.push('## Skills not trained', '');
    for (const s of r.skipped) lines.push(`- ${safeLine(s.skill)}: ${safeLine(s.reason)}`);
    lines.push('');
  }
  if (tasks.length) {
    lines.push('## Tasks', '', '| Split | Id | Request | Judged by |', '|---|---|---|---|');
    for (const t of tasks)
      lines.push(`| ${t.split} | ${safeLine(t.id, 40)} | ${safeLine(t.intent, 120)} | ${t.reference_kind} |`);
    lines.push('');
  }
  if (r.notes.length) {
    lines.push('## Notes', '');
    for (const n of r.notes) lines.push(`- ${safeLine(n)}`);
    lines.push('');
  }
  lines.push('## Adoption', '');
  if (staged.length) {
    lines.push(
      `Nothing live has changed. \`diff.patch\` shows the change to ${staged.map((d) => safeLine(d.document)).join(', ')}.`,
      'Adopt it with `skillopt sleep adopt` (a backup of each file is kept in this folder); undo with `skillopt sleep rollback`.',
    );
  } else lines.push('Nothing to adopt: no proposal passed the gate tonight. Nothing live has changed.');
  return `${lines.join('\n')}\n`;
}
