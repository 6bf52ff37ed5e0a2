/**
 * The LLM judge: a model (`model.judge`, which defaults to the optimizer's settings) grades the
 * answer against the references and a rubric. Its calls carry `purpose: 'judge'`, so the ledger
 * counts them apart from the target's. A judge reply that stays unusable after one corrective
 * retry is an infrastructure failure (the item is left out of the score), not a wrong answer.
 */
import { z } from 'zod';
import { completeJson, StructuredOutputError } from '../../model/structured.ts';
import { InfraError } from '../../model/types.ts';
import { envPrompt } from '../prompts.ts';
import { render } from '../template.ts';
import type { Scorer } from './types.ts';

export const JudgeScorerSchema = z
  .object({
    type: z.literal('judge'),
    /** What a correct answer must do, in your words. */
    rubric: z.string().default('The answer is correct when it states the same final answer as a reference answer.'),
    max_output_tokens: z.number().int().positive().default(1024),
  })
  .strict();

const VerdictSchema = z
  .object({
    verdict: z.preprocess(
      (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
      z.enum(['correct', 'incorrect']),
    ),
    score: z.coerce.number().min(0).max(1).optional(),
    reason: z.string().default(''),
  })
  .loose();

const USER = `## Rubric
{{rubric}}

## Task
{{task}}

## Reference answer(s)
{{references}}

## Answer to grade
{{prediction}}`;

export function judgeScorer(config: z.infer<typeof JudgeScorerSchema>): Scorer {
  return async ({ prediction, golds, task, reply }, ctx) => {
    if (!ctx.judge) throw new Error('the judge scorer needs a judge model (model.judge)');
    const user = render(USER, {
      rubric: config.rubric,
      task,
      references: golds.length ? golds.map((g) => `- ${g}`).join('\n') : '(none given: use the rubric)',
      prediction: prediction || '(empty answer)',
    });
    let verdict: z.infer<typeof VerdictSchema>;
    try {
      ({ value: verdict } = await completeJson(ctx.judge, {
        purpose: 'judge',
        system: envPrompt('tasks', 'judge'),
        messages: [{ role: 'user', content: user }],
        // What a simulated judge reads (`src/model/sim/audit-plants.ts`); no provider is sent it.
        meta: { kind: 'judge', prediction, references: golds, reply },
        schema: VerdictSchema,
        schemaName: 'verdict',
        maxOutputTokens: config.max_output_tokens,
        sample: ctx.sample,
        signal: ctx.signal,
      }));
    } catch (err) {
      if (err instanceof StructuredOutputError)
        throw new InfraError(`the judge's reply was unusable: ${err.message}`, 'bad_response');
      throw err;
    }
    const hard = verdict.verdict === 'correct' ? 1 : 0;
    return {
      hard,
      soft: verdict.score ?? hard,
      metric: 'JUDGE',
      feedback: verdict.reason ? `judge: ${verdict.reason}` : undefined,
      details: { judge_verdict: verdict.verdict, judge_score: verdict.score },
    };
  };
}
