/**
 * A task's answer judged by the task's own reference: its rule checks (no model), its exact
 * answer (no model), or its rubric (the judge model; a task without a reference is judged
 * against its own request). A judge call that fails, or whose reply stays unusable, throws the
 * model's error: the attempt is then an infrastructure error, never a wrong answer.
 */
import { z } from 'zod';
import { fill, loadPrompt } from '../../prompt-files.ts';
import type { SleepJudgeMeta } from '../../protocol/sleep.ts';
import { completeJson } from '../../model/structured.ts';
import type { ChatModel } from '../../model/types.ts';
import type { TaskRecord } from '../tasks/task.ts';
import { scoreRuleJudge } from './rules.ts';
import { exactScore, keywordSoft } from './text-scores.ts';

export interface Verdict {
  hard: number;
  soft: number;
  why: string;
}

/** A rubric score at or above this passes. */
export const RUBRIC_PASS = 0.8;
/** The longest answer shown to the rubric judge. */
const ANSWER_CHARS = 8000;

export const JudgeReplySchema = z
  .object({ score: z.coerce.number().min(0).max(1), reason: z.string().default('') })
  .loose();

export async function judgeAnswer(
  task: TaskRecord,
  response: string,
  tools: string[],
  judge: ChatModel | undefined,
  signal?: AbortSignal,
): Promise<Verdict> {
  if (task.reference_kind === 'rule') {
    const r = scoreRuleJudge(task.judge, response, tools);
    return { hard: r.hard, soft: r.soft, why: r.rationale };
  }
  if (task.reference_kind === 'exact') {
    const hard = exactScore(task.reference, response);
    return {
      hard,
      soft: Math.max(hard, keywordSoft(task.reference, response)),
      why: hard ? 'matches the reference' : `does not contain the reference '${task.reference}'`,
    };
  }
  if (!judge)
    throw new Error(
      `task ${task.id} needs the judge model (its reference is a ${task.reference_kind === 'rubric' ? 'rubric' : 'request to judge against'}), and none was given`,
    );
  const rubric =
    task.reference_kind === 'rubric' && task.reference.trim()
      ? task.reference
      : `The answer does what was asked: ${task.intent}`;
  const shown = response.length > ANSWER_CHARS ? `${response.slice(0, ANSWER_CHARS)} …[cut]` : response;
  const meta: SleepJudgeMeta = { kind: 'sleep_judge', rubric, response: shown };
  const { value } = await completeJson(judge, {
    purpose: 'sleep_judge',
    system: fill(loadPrompt('sleep/judge'), {}),
    messages: [{ role: 'user', content: `## Rubric\n${rubric}\n\n## Answer\n${shown || '(empty)'}` }],
    schema: JudgeReplySchema,
    schemaName: 'verdict',
    meta,
    maxOutputTokens: 1024,
    signal,
  });
  return {
    hard: value.score >= RUBRIC_PASS ? 1 : 0,
    soft: value.score,
    why: value.reason || `rubric score ${value.score}`,
  };
}
