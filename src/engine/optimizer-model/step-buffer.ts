/**
 * The step buffer: this epoch's memory of failure patterns and rejected edits, shown to later
 * analysts (and to the autonomous learning rate and the rewrite) so that they do not propose
 * again what the gate just rejected. It starts empty at each epoch; on resume it is rebuilt
 * from the epoch's `trajectory_digest.json` files.
 */
import type { Trajectory } from '../../envs/types.ts';
import type { StepBufferEntry, UpdateItem } from '../../protocol/optimizer.ts';
import { isRejected, type StepAction } from '../../run/records.ts';

export function isFailure(t: Pick<Trajectory, 'hard' | 'error'>): boolean {
  return !t.error && !(t.hard >= 1e-9);
}

/** Failures grouped by the text of their reason before the first ':' (insertion order). */
export function failurePatterns(trajectories: Trajectory[]): StepBufferEntry['failure_patterns'] {
  const groups = new Map<string, string[]>();
  for (const t of trajectories) {
    if (!isFailure(t)) continue;
    const reason = t.failReason ?? 'unknown';
    const colon = reason.indexOf(':');
    const key = (colon >= 0 ? reason.slice(0, colon) : reason).trim();
    const ids = groups.get(key) ?? [];
    ids.push(t.id);
    groups.set(key, ids);
  }
  return [...groups].map(([pattern, ids]) => ({ pattern, count: ids.length, task_ids: ids }));
}

/** What the buffer keeps of a rejected item. */
export function shortItem(i: UpdateItem): Record<string, unknown> {
  if ('op' in i) return { op: i.op, content: i.content ?? '', target: i.target ?? '' };
  if ('new_skill' in i) {
    const summary = Array.isArray(i.change_summary) ? i.change_summary.join('; ') : String(i.change_summary ?? '');
    return { type: 'rewrite', title: i.title ?? '', instruction: summary, source_type: i.source_type };
  }
  return { type: i.type ?? '', title: i.title ?? '', instruction: i.instruction ?? '' };
}

export function stepEntry(args: {
  step: number;
  action: StepAction;
  trajectories: Trajectory[];
  findings: string[];
  /** `stoppedEarly`: the gate stopped once a reject was certain, so `scoreAfter` is a bound. */
  rejected?: { items: UpdateItem[]; scoreBefore: number; scoreAfter: number; stoppedEarly?: boolean };
}): StepBufferEntry & { analyst_findings: string[] } {
  const scored = args.trajectories.filter((t) => !t.error);
  const entry: StepBufferEntry & { analyst_findings: string[] } = {
    step: args.step,
    action: args.action,
    n_total: Math.max(1, scored.length),
    n_fail: scored.filter(isFailure).length,
    failure_patterns: failurePatterns(scored),
    analyst_findings: args.findings,
  };
  if (isRejected(args.action) && args.rejected && args.rejected.items.length > 0) {
    entry.score_before = args.rejected.scoreBefore;
    if (args.rejected.stoppedEarly) entry.score_after_at_most = args.rejected.scoreAfter;
    else entry.score_after = args.rejected.scoreAfter;
    entry.rejected_edits = args.rejected.items.map(shortItem);
  }
  return entry;
}

/**
 * The buffer as the optimizer is shown it. An early-stopped reject says that it stopped early but
 * not its bound, which is only known once the gate has stopped: so the next step's prompts are
 * known while the gate still runs, and its reflection can start ahead (`evaluation.gate_overlap`).
 */
export function optimizerView<E extends StepBufferEntry>(entries: E[]): E[] {
  return entries.map(
    ({ score_after_at_most, ...e }) => (score_after_at_most === undefined ? e : { ...e, stopped_early: true }) as E,
  );
}

/** The optimizer's memory of this epoch: entries as it is shown them, and as prompt text. */
export function optimizerMemory(entries: (StepBufferEntry & { analyst_findings?: string[] })[]): {
  entries: StepBufferEntry[];
  text: string;
} {
  const view = optimizerView(entries);
  return { entries: view, text: renderStepBuffer(view) };
}

export function renderStepBuffer(entries: (StepBufferEntry & { analyst_findings?: string[] })[]): string {
  if (entries.length === 0) return '';
  const lines = [
    'Earlier steps of this epoch. Do not propose again what was rejected; focus on failure patterns that are still open.',
  ];
  for (const e of entries) {
    lines.push('', `### Step ${e.step}: ${e.action.toUpperCase()} (${e.n_fail}/${e.n_total} failed)`);
    for (const p of e.failure_patterns) lines.push(`  - "${p.pattern}" (x${p.count}, tasks: ${p.task_ids.join(', ')})`);
    for (const f of e.analyst_findings ?? []) lines.push(`  - analysts: ${f}`);
    if (e.rejected_edits?.length) {
      lines.push(
        e.stopped_early || e.score_after_at_most !== undefined
          ? `  Rejected changes (no better than the current score ${e.score_before}; the evaluation stopped early):`
          : `  Rejected changes (score ${e.score_before} -> ${e.score_after}):`,
      );
      e.rejected_edits.forEach((r, i) => {
        if ('op' in r) {
          const target = String(r.target ?? '');
          lines.push(
            target
              ? `    ${i + 1}. [${String(r.op)}] target="${target}" -> "${String(r.content)}"`
              : `    ${i + 1}. [${String(r.op)}] "${String(r.content)}"`,
          );
        } else lines.push(`    ${i + 1}. [${String(r.type)}] "${String(r.title)}" -> "${String(r.instruction)}"`);
      });
    }
  }
  return lines.join('\n');
}
