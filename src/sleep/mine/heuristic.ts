/**
 * The heuristic miner: one task per session, with no model. The task is the session's first
 * prompt; its later prompts (up to three) are context; the outcome comes from the user's
 * feedback. Such a task has no reference: a model judges an answer against its intent.
 */
import type { SessionDigest } from '../harvest/digest.ts';
import { feedbackSignals } from '../harvest/text.ts';
import { sha256Hex, taskRecord, type Outcome, type TaskRecord } from '../tasks/task.ts';

/** At most `max` characters (stripped), with ` …` when cut. */
export function shorten(text: string, max: number): string {
  const t = text.trim();
  return t.length <= max ? t : `${t.slice(0, max)} …`;
}

/**
 * The session's outcome by the user's last word on it: the last prompt that holds feedback
 * decides (praise after a complaint is a success); without any, the session's own error
 * markers say fail, a long exchange is mixed, else unknown.
 */
export function outcomeOf(digest: Pick<SessionDigest, 'user_prompts' | 'feedback_signals' | 'n_user_turns'>): Outcome {
  for (let i = digest.user_prompts.length - 1; i >= 1; i--) {
    const signals = feedbackSignals(digest.user_prompts[i]!);
    if (signals.some((s) => s.startsWith('neg:'))) return 'fail';
    if (signals.some((s) => s.startsWith('pos:'))) return 'success';
  }
  if (digest.feedback_signals.some((s) => s.startsWith('neg:'))) return 'fail';
  if (digest.feedback_signals.some((s) => s.startsWith('pos:'))) return 'success';
  return digest.n_user_turns >= 3 ? 'mixed' : 'unknown';
}

/** The one skill a session invoked, else ''. */
export function skillHintOf(digest: Pick<SessionDigest, 'skills_used'>): string {
  const skills = [...new Set(digest.skills_used.map((s) => s.trim()).filter(Boolean))];
  return skills.length === 1 ? skills[0]! : '';
}

const CONTEXT_HEAD = 'Follow-up requests from the same session:';

export function heuristicTask(digest: SessionDigest): TaskRecord | undefined {
  const first = digest.user_prompts[0]?.trim() ?? '';
  if (first.length < 8) return undefined;
  const followUps = digest.user_prompts.slice(1, 4).map((p) => `- ${shorten(p, 200)}`);
  const tags: string[] = [];
  if (digest.tools_used.length) tags.push(`tools:${digest.tools_used.slice(0, 4).join('+')}`);
  if (digest.git_branch) tags.push(`branch:${digest.git_branch}`);
  return taskRecord({
    id: `task_${sha256Hex(`${digest.project}::${first}`).slice(0, 12)}`,
    project: digest.project,
    intent: shorten(first, 800),
    context_excerpt: followUps.length ? shorten(`${CONTEXT_HEAD}\n${followUps.join('\n')}`, 600) : '',
    attempted_solution: shorten(digest.assistant_finals.at(-1) ?? '', 600),
    outcome: outcomeOf(digest),
    reference_kind: 'none',
    tags,
    source_sessions: [digest.session_id],
    skill_hint: skillHintOf(digest),
  });
}

/** One task per session with a first prompt of eight characters or more, in session order, at most `max`. */
export function mineHeuristic(digests: SessionDigest[], max: number): TaskRecord[] {
  const out: TaskRecord[] = [];
  for (const d of digests) {
    if (out.length >= max) break;
    const task = heuristicTask(d);
    if (task) out.push(task);
  }
  return out;
}
