/**
 * The built-in scorers of the `tasks` env, chosen by `env.scorer.type`, and how each maps to a
 * hard score (pass / fail, what the gate uses) and a soft one (partial credit):
 *
 * | type | hard | soft |
 * |---|---|---|
 * | exact_match | normalised prediction equals a gold | best token F1 |
 * | token_f1 | F1 ≥ pass_at | best token F1 |
 * | contains | a normalised gold occurs in the prediction | same |
 * | regex | a pattern matches the prediction | same |
 * | numeric | the number is within tolerance of a gold | same |
 * | choice | the picked label is the expected label | same |
 * | anls | ANLS ≥ pass_at | ANLS |
 * | json_field | every compared field matches | share of fields that match |
 * | judge | the judge's verdict is "correct" | the judge's score |
 * | custom | what the module returns | what the module returns |
 */
import { z } from 'zod';
import { extractJson } from '../../model/json-extract.ts';
import { getPath, stringify } from './extract.ts';
import { judgeScorer, JudgeScorerSchema } from './judge.ts';
import { customScorer, CustomScorerSchema } from './custom.ts';
import {
  anls,
  contains,
  exactMatch,
  normalizeLabel,
  numericMatch,
  pickLabel,
  tokenF1,
  type Choice,
} from './metrics.ts';
import { basicNormalize, normalizer } from './normalize.ts';
import type { Score, ScoreInput, Scorer } from './types.ts';

const normalize = z.enum(['squad', 'basic', 'none']).default('basic');

export const ScorerSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('exact_match'), normalize }).strict(),
  z.object({ type: z.literal('token_f1'), normalize, pass_at: z.number().min(0).max(1).default(1) }).strict(),
  z.object({ type: z.literal('contains'), normalize }).strict(),
  z
    .object({
      type: z.literal('regex'),
      /** One pattern for every item; when empty, each item's expected answers are the patterns. */
      pattern: z.string().default(''),
      flags: z.string().default('i'),
    })
    .strict()
    .refine(
      (c) => {
        try {
          new RegExp(c.pattern, c.flags);
          return true;
        } catch {
          return false;
        }
      },
      { message: 'pattern and flags must form a valid regular expression', path: ['pattern'] },
    ),
  z
    .object({
      type: z.literal('numeric'),
      abs_tol: z.number().nonnegative().default(0),
      rel_tol: z.number().nonnegative().default(1e-6),
      /** Read "3.5 million" as 3500000 (thousand, million, billion, trillion). */
      scale_words: z.boolean().default(true),
    })
    .strict(),
  z
    .object({
      type: z.literal('choice'),
      /** Item field holding the choices: a list of {label, text}, a list of texts (labelled A, B, …) or a label → text mapping. */
      choices_field: z.string().default('choices'),
    })
    .strict(),
  z
    .object({
      type: z.literal('anls'),
      threshold: z.number().min(0).max(1).default(0.5),
      pass_at: z.number().min(0).max(1).default(0.999),
    })
    .strict(),
  z
    .object({
      type: z.literal('json_field'),
      /** Dotted paths compared; empty = every key of the expected object. */
      fields: z.array(z.string()).default([]),
      normalize,
    })
    .strict(),
  JudgeScorerSchema,
  CustomScorerSchema,
]);
export type ScorerConfig = z.infer<typeof ScorerSchema>;

const sync =
  (f: (input: ScoreInput) => Score): Scorer =>
  async (input) =>
    f(input);

/** The choices of an item in one shape, from the shapes data sets use. */
export function choicesOf(value: unknown): Choice[] {
  if (Array.isArray(value)) {
    return value.map((c, i) =>
      c && typeof c === 'object'
        ? {
            label: normalizeLabel(String((c as Record<string, unknown>).label ?? String.fromCharCode(65 + i))),
            text: stringify((c as Record<string, unknown>).text ?? (c as Record<string, unknown>).content),
          }
        : { label: String.fromCharCode(65 + i), text: stringify(c) },
    );
  }
  if (value && typeof value === 'object')
    return Object.entries(value).map(([label, text]) => ({ label: normalizeLabel(label), text: stringify(text) }));
  return [];
}

function jsonFieldScore(input: ScoreInput, fields: string[], norm: (s: string) => string): Score {
  const expected = typeof input.expected === 'string' ? extractJson(input.expected) : input.expected;
  if (!expected || typeof expected !== 'object')
    return { hard: 0, soft: 0, metric: 'JSON', feedback: 'the expected answer is not a JSON object' };
  const got = extractJson(input.prediction);
  if (got === undefined) return { hard: 0, soft: 0, metric: 'JSON', feedback: 'the answer holds no JSON object' };
  const keys = fields.length ? fields : Object.keys(expected);
  const wrong = keys.filter((k) => norm(stringify(getPath(got, k))) !== norm(stringify(getPath(expected, k))));
  const soft = keys.length ? (keys.length - wrong.length) / keys.length : 1;
  return {
    hard: wrong.length === 0 ? 1 : 0,
    soft,
    metric: 'JSON',
    ...(wrong.length
      ? {
          feedback: `fields that differ: ${wrong.map((k) => `${k} (got ${stringify(getPath(got, k)) || 'nothing'}, expected ${stringify(getPath(expected, k))})`).join('; ')}`,
        }
      : {}),
  };
}

/** `resolvePath` makes a custom scorer's module path absolute (EnvContext.resolvePath). */
export async function buildScorer(
  config: ScorerConfig,
  ctx: { resolvePath(key: string, value: string): string },
): Promise<Scorer> {
  switch (config.type) {
    case 'exact_match': {
      const norm = normalizer(config.normalize);
      return sync(({ prediction, golds }) => ({
        hard: exactMatch(prediction, golds, norm),
        soft: tokenF1(prediction, golds, norm),
        metric: 'EM',
      }));
    }
    case 'token_f1': {
      const norm = normalizer(config.normalize);
      return sync(({ prediction, golds }) => {
        const f1 = tokenF1(prediction, golds, norm);
        return { hard: f1 >= config.pass_at ? 1 : 0, soft: f1, metric: 'F1', details: { f1 } };
      });
    }
    case 'contains': {
      const norm = normalizer(config.normalize);
      return sync(({ prediction, golds }) => {
        const v = contains(prediction, golds, norm);
        return { hard: v, soft: v, metric: 'CONTAINS' };
      });
    }
    case 'regex': {
      const fixed = config.pattern ? new RegExp(config.pattern, config.flags) : undefined;
      return sync(({ prediction, golds }) => {
        const patterns = fixed ? [fixed] : golds.map((g) => new RegExp(g, config.flags));
        const v = patterns.some((re) => re.test(prediction)) ? 1 : 0;
        return { hard: v, soft: v, metric: 'REGEX' };
      });
    }
    case 'numeric':
      return sync(({ prediction, golds }) => {
        const v = numericMatch(prediction, golds, {
          absTol: config.abs_tol,
          relTol: config.rel_tol,
          scaleWords: config.scale_words,
        });
        return { hard: v, soft: v, metric: 'NUM' };
      });
    case 'choice':
      return sync(({ prediction, golds, item }) => {
        const choices = choicesOf(item[config.choices_field]);
        const picked = pickLabel(prediction, choices);
        const expected = golds.map((g) => pickLabel(g, choices));
        const v = expected.includes(picked) ? 1 : 0;
        return { hard: v, soft: v, metric: 'MCQ', details: { predicted_label: picked, correct_label: expected[0] } };
      });
    case 'anls':
      return sync(({ prediction, golds }) => {
        const s = anls(prediction, golds, config.threshold);
        return { hard: s >= config.pass_at ? 1 : 0, soft: s, metric: 'ANLS', details: { anls: s } };
      });
    case 'json_field': {
      const norm =
        config.normalize === 'none'
          ? (s: string) => s.trim()
          : config.normalize === 'squad'
            ? normalizer('squad')
            : basicNormalize;
      return sync((input) => jsonFieldScore(input, config.fields, norm));
    }
    case 'judge':
      return judgeScorer(config);
    case 'custom':
      return customScorer(config, ctx.resolvePath('scorer.module', config.module));
  }
}
