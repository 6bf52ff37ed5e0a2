/**
 * The LLM miner: the optimizer model reads one session and returns up to three recurring tasks,
 * each with a rubric and rule checks. A rubric, when given, is the task's reference (literal
 * checks alone can be gamed by an edit that makes the agent echo them); otherwise well-formed
 * checks make a rule judge; a task with neither cannot be judged and is dropped.
 */
import { z } from 'zod';
import type { OptimizerContext } from '../../engine/optimizer-model/ask.ts';
import { ask } from '../../engine/optimizer-model/ask.ts';
import { fill, loadPrompt } from '../../prompt-files.ts';
import type { SleepMineMeta } from '../../protocol/sleep.ts';
import type { SessionDigest } from '../harvest/digest.ts';
import { BOUND_OPS, charBound, STRING_OPS } from '../judge/rules.ts';
import { sha256Hex, taskRecord, type Check, type TaskRecord } from '../tasks/task.ts';
import { shorten, skillHintOf } from './heuristic.ts';

/** Tasks one session may give. */
export const TASKS_PER_SESSION = 3;

export const MinerReplySchema = z.object({ tasks: z.array(z.unknown()).default([]) }).loose();

/** The well-formed checks of a mined task; the rest are dropped. */
export function wellFormedChecks(raw: unknown): Check[] {
  if (!Array.isArray(raw)) return [];
  const out: Check[] = [];
  for (const c of raw) {
    if (!c || typeof c !== 'object') continue;
    const { op, arg } = c as { op?: unknown; arg?: unknown };
    if (typeof op !== 'string') continue;
    if ((STRING_OPS as readonly string[]).includes(op)) {
      if (typeof arg !== 'string' || !arg.trim()) continue;
      out.push({ op, arg: op === 'regex' ? arg : arg.trim() });
    } else if ((BOUND_OPS as readonly string[]).includes(op)) {
      const bound = charBound(arg);
      if (bound !== undefined && bound >= 0) out.push({ op, arg: bound });
    } else if (op === 'no_refusal') out.push({ op, arg: null });
  }
  return out;
}

/** The tasks of one miner reply about `digest`; `dropped` counts those that could not be judged. */
export function tasksFromReply(items: unknown[], digest: SessionDigest): { tasks: TaskRecord[]; dropped: number } {
  const tasks: TaskRecord[] = [];
  let dropped = 0;
  for (const item of items.slice(0, TASKS_PER_SESSION)) {
    if (!item || typeof item !== 'object') continue;
    const { intent, checks, rubric, satisfied } = item as {
      intent?: unknown;
      checks?: unknown;
      rubric?: unknown;
      satisfied?: unknown;
    };
    const text = typeof intent === 'string' ? intent.trim() : '';
    if (text.length < 8) {
      dropped++;
      continue;
    }
    const base = {
      id: `llm_${sha256Hex(`${digest.project}${text}`).slice(0, 12)}`,
      project: digest.project,
      intent: shorten(text, 800),
      outcome:
        satisfied === true ? ('success' as const) : satisfied === false ? ('fail' as const) : ('unknown' as const),
      tags: ['mined:llm'],
      source_sessions: [digest.session_id],
      skill_hint: skillHintOf(digest),
    };
    const valid = wellFormedChecks(checks);
    if (typeof rubric === 'string' && rubric.trim())
      tasks.push(taskRecord({ ...base, reference_kind: 'rubric', reference: rubric.trim() }));
    else if (valid.length)
      tasks.push(taskRecord({ ...base, reference_kind: 'rule', judge: { kind: 'rule', checks: valid } }));
    else dropped++;
  }
  return { tasks, dropped };
}

function sessionText(d: SessionDigest): string {
  const prompts = d.user_prompts.slice(0, 6).map((p) => `  - ${shorten(p, 240)}`);
  return [
    `## Project\n${d.project || '(unknown)'}`,
    `## The developer's prompts, in order\n${prompts.length ? prompts.join('\n') : '(none)'}`,
    `## The agent's last answer\n${shorten(d.assistant_finals.at(-1) ?? '', 400) || '(none)'}`,
    `## Feedback spotted in the developer's words\n${d.feedback_signals.slice(0, 6).join(', ') || '(none)'}`,
  ].join('\n\n');
}

export interface MinerStats {
  sessions: number;
  /** Sessions whose call failed or whose reply could not be read. */
  failed: number;
  dropped: number;
}

/**
 * Tasks from the first `maxSessions` sessions with prompts, until `maxTasks`. A session whose
 * call fails gives no task (the warning says so); the others still count.
 */
export async function mineWithModel(
  ctx: OptimizerContext,
  digests: SessionDigest[],
  limits: { maxSessions: number; maxTasks: number },
): Promise<{ tasks: TaskRecord[]; stats: MinerStats }> {
  const sessions = digests.filter((d) => d.user_prompts.length > 0).slice(0, limits.maxSessions);
  const system = fill(loadPrompt('sleep/miner'), { max_tasks: String(TASKS_PER_SESSION) });
  const replies = await Promise.all(
    sessions.map((d) => {
      const meta: SleepMineMeta = {
        kind: 'sleep_mine',
        project: d.project,
        prompts: d.user_prompts.slice(0, 6),
        final: d.assistant_finals.at(-1) ?? '',
        feedback: d.feedback_signals,
        maxTasks: TASKS_PER_SESSION,
      };
      return ask(ctx, {
        purpose: 'sleep_mine',
        system,
        user: sessionText(d),
        schema: MinerReplySchema,
        schemaName: 'mined_tasks',
        meta,
        maxTokens: 1500,
        during: `mining session ${d.session_id}`,
        fallback: 'the session gives no task',
      });
    }),
  );
  const stats: MinerStats = { sessions: sessions.length, failed: 0, dropped: 0 };
  const tasks: TaskRecord[] = [];
  replies.forEach((reply, i) => {
    if (!reply) {
      stats.failed++;
      return;
    }
    const got = tasksFromReply(reply.tasks, sessions[i]!);
    stats.dropped += got.dropped;
    for (const t of got.tasks) if (tasks.length < limits.maxTasks) tasks.push(t);
  });
  return { tasks, stats };
}
