/**
 * The `sim` environment: questions about fictional sites whose answers must follow hidden house
 * conventions, answered by the simulated target (`sim` backend). Offline and deterministic;
 * see src/model/sim/world.ts. Its scores are those of a simulation, not of any real model.
 */
import { distance } from 'fastest-levenshtein';
import { z } from 'zod';
import type { SimTaskMeta } from '../../model/sim/world.ts';
import { expectedAnswer, makeTasks, type SimTask } from '../../model/sim/world.ts';
import { KINDS } from '../../model/sim/rules.ts';
import { registerEnv } from '../registry.ts';
import type { Env, Item, RolloutContext, SecondScorer, Trajectory } from '../types.ts';
import type { ProbeForm } from '../../config/audit-schema.ts';
import { probeId, recast } from '../../audit/probes.ts';
import { judgeScorer } from '../scoring/judge.ts';
import { replyOf } from '../qa.ts';
import type { ScoreInput } from '../scoring/types.ts';

export const SimEnvOptions = z.object({
  /** Items of the generated train split. */
  n_train: z.number().int().positive().default(60),
  /** Items of the generated val (selection) split. */
  n_val: z.number().int().positive().default(30),
  /** Items of the generated test split. */
  n_test: z.number().int().positive().default(60),
  /** Share of items whose recorded answer cannot be reached. */
  noise: z.number().min(0).max(1).default(0.06),
  /** Seed of the generated data (the training seed is `train.seed`). */
  data_seed: z.number().int().default(7),
  /**
   * How answers are scored: `exact` (the answer must equal the expected one), or `judge` (the judge
   * model grades it; the sim judge agrees with `exact` unless it is gullible, see audit-plants.ts).
   */
  scorer: z.enum(['exact', 'judge']).default('exact'),
});

const JUDGE = judgeScorer({
  type: 'judge',
  rubric: 'The answer is correct when it is exactly the reference answer, format included.',
  max_output_tokens: 256,
});

const ANSWER_RULE = 'Reply with the answer alone, inside <answer></answer> tags.';

export function simSystemPrompt(skill: string): string {
  return skill.trim() ? `${skill.trim()}\n\n---\n${ANSWER_RULE}` : ANSWER_RULE;
}

export function extractTagged(text: string): string {
  const all = [...text.matchAll(/<answer>([\s\S]*?)<\/answer>/gi)];
  return (all.at(-1)?.[1] ?? text).trim();
}

const exact = (predicted: string, expected: string) => predicted === expected;

function scoreInput(prediction: string, item: Item, reply: string): ScoreInput {
  const expected = String(item.expected);
  return { prediction, golds: [expected], expected, item, task: String(item.question), reply };
}

function toItem(task: SimTask): Item {
  return {
    id: task.id,
    type: task.type,
    question: task.question,
    fact: task.fact,
    expected: expectedAnswer(task),
    noise: task.noise,
  };
}

export class SimEnv implements Env {
  readonly name = 'sim';
  readonly usesJudge: boolean;
  /** The audit's second look: the rule when the judge scores, the judge when the rule does. */
  readonly secondScorer: SecondScorer;
  readonly analystGuide =
    'Answers are short values; compare each predicted answer with the expected one character by character and name the formatting convention it breaks.';

  private readonly options: z.infer<typeof SimEnvOptions>;

  constructor(options: Omit<z.infer<typeof SimEnvOptions>, 'scorer'> & Partial<z.infer<typeof SimEnvOptions>>) {
    this.options = { scorer: 'exact', ...options };
    this.usesJudge = this.options.scorer === 'judge';
    this.secondScorer = this.usesJudge
      ? { kind: 'rule', score: async (t) => (exact(t.predicted ?? '', String(t.expected ?? '')) ? 1 : 0) }
      : {
          kind: 'judge',
          score: async (t, item, ctx) => {
            const { hard } = await JUDGE(scoreInput(t.predicted ?? '', item, replyOf(t)), ctx);
            return hard;
          },
        };
  }

  /** The item with its question recast; its id names the form, so that its rollouts are its own. */
  probe(item: Item, form: ProbeForm): Item | undefined {
    const question = recast(String(item.question), form, item.id);
    return question === undefined ? undefined : { ...item, id: probeId(item.id, form), question };
  }

  async load() {
    const { n_train, n_val, n_test, noise, data_seed } = this.options;
    return {
      train: makeTasks('train', n_train, data_seed, noise).map(toItem),
      val: makeTasks('val', n_val, data_seed, noise).map(toItem),
      test: makeTasks('test', n_test, data_seed, noise).map(toItem),
    };
  }

  taskTypes(): string[] {
    return [...KINDS];
  }

  async rollout(item: Item, skill: string, ctx: RolloutContext): Promise<Trajectory> {
    const system = simSystemPrompt(skill);
    const question = String(item.question);
    const meta: SimTaskMeta = {
      kind: 'sim_task',
      task: { id: item.id, fact: item.fact as SimTaskMeta['task']['fact'] },
    };
    const reply = await ctx.target.complete({
      purpose: 'rollout',
      system,
      skill,
      messages: [{ role: 'user', content: question }],
      meta,
      sample: ctx.sample,
      signal: ctx.signal,
    });
    const predicted = extractTagged(reply.text);
    const expected = String(item.expected);
    const hard = this.usesJudge
      ? (
          await JUDGE(scoreInput(predicted, item, reply.text), {
            judge: ctx.judge,
            sample: ctx.sample,
            signal: ctx.signal,
          })
        ).hard
      : exact(predicted, expected)
        ? 1
        : 0;
    const soft =
      Math.max(predicted.length, expected.length) === 0
        ? 1
        : 1 - distance(predicted, expected) / Math.max(predicted.length, expected.length);
    return {
      id: item.id,
      hard,
      soft,
      taskType: item.type,
      task: question,
      predicted,
      expected,
      failReason: hard
        ? undefined
        : `${this.usesJudge ? 'JUDGE' : 'EM'}=0: predicted '${predicted}' but expected '${expected}'`,
      conversation: [
        { role: 'user', content: question },
        { role: 'assistant', content: reply.text },
        {
          role: 'system',
          content: `evaluation: predicted '${predicted}', expected '${expected}', ${this.usesJudge ? 'judged correct' : 'exact match'} ${hard}`,
        },
      ],
      systemPrompt: system,
      userPrompt: question,
      usage: reply.usage,
      ...(reply.trace ? { traces: [reply.trace] } : {}),
    };
  }
}

registerEnv({
  name: 'sim',
  aliases: ['simulator'],
  optionsSchema: SimEnvOptions,
  create: (config) =>
    new SimEnv(
      SimEnvOptions.parse(Object.fromEntries(Object.entries(config).filter(([k]) => k in SimEnvOptions.shape))),
    ),
});
