/**
 * Tasks seen more than once (the same request in several sessions) merged into one: the first
 * record wins, the sessions are joined, the most resolved outcome is kept, and the skill hint
 * stays only when every observation names the same skill.
 */
import type { Outcome, TaskRecord } from '../tasks/task.ts';

const RESOLVED: Record<Outcome, number> = { success: 3, fail: 2, mixed: 1, unknown: 0 };

export function dedupTasks(tasks: TaskRecord[]): TaskRecord[] {
  const byId = new Map<string, { task: TaskRecord; hints: Set<string> }>();
  for (const t of tasks) {
    const seen = byId.get(t.id);
    if (!seen) {
      byId.set(t.id, { task: { ...t, source_sessions: [...t.source_sessions] }, hints: new Set([t.skill_hint]) });
      continue;
    }
    for (const s of t.source_sessions) if (!seen.task.source_sessions.includes(s)) seen.task.source_sessions.push(s);
    if (RESOLVED[t.outcome] > RESOLVED[seen.task.outcome]) seen.task.outcome = t.outcome;
    seen.hints.add(t.skill_hint);
  }
  return [...byId.values()].map(({ task, hints }) => ({ ...task, skill_hint: hints.size === 1 ? [...hints][0]! : '' }));
}
