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
import type { Env, Item, RolloutContext, Trajectory } from '../types.ts';

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
});

const ANSWER_RULE = 'Reply with the answer alone, inside <answer></answer> tags.';

export function simSystemPrompt(skill: string): string {
  return skill.trim() ? `${skill.trim()}\n\n---\n${ANSWER_RULE}` : ANSWER_RULE;
}

export function extractTagged(text: string): string {
  const all = [...text.matchAll(/<answer>([\s\S]*?)<\/answer>/gi)];
  return (all.at(-1)?.[1] ?? text).trim();
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
  readonly analystGuide =
    'Answers are short values; compare each predicted answer with the expected one character by character and name the formatting convention it breaks.';

  constructor(private readonly options: z.infer<typeof SimEnvOptions>) {}

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
    const hard = predicted === expected ? 1 : 0;
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
      failReason: hard ? undefined : `EM=0: predicted '${predicted}' but expected '${expected}'`,
      conversation: [
        { role: 'user', content: question },
        { role: 'assistant', content: reply.text },
        {
          role: 'system',
          content: `evaluation: predicted '${predicted}', expected '${expected}', exact match ${hard}`,
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
