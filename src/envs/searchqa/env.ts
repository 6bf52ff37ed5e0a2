/**
 * SearchQA (reference B.4): Jeopardy-style clues with search snippets as context; the target
 * answers in `<answer>` tags; hard = exact match and soft = token F1, both after SQuAD
 * normalisation, best over the accepted answers. Items load from materialised split
 * directories (`{id, question, context, answers}`) or, in ratio mode, from the published
 * records (`key`, `question`, `context`, `answers`, as JSONL, JSON or Parquet).
 */
import { z } from 'zod';
import { DataError } from '../data/errors.ts';
import { readRecordsFrom, type RawRecord } from '../data/read.ts';
import { envOptions } from '../options.ts';
import { QaEnv, type Presented } from '../qa-env.ts';
import { registerEnv } from '../registry.ts';
import { goldList } from '../scoring/golds.ts';
import { contains, exactMatch, tokenF1 } from '../scoring/metrics.ts';
import { squadNormalize } from '../scoring/normalize.ts';
import type { Score } from '../scoring/types.ts';
import type { Item } from '../types.ts';

export const SearchQaOptions = z.object({
  /** Turns at most; a later turn only asks again when the reply had no answer in the required form. */
  max_turns: z.number().int().positive().default(1),
  /** Output token cap of each target call; unset = the role's `max_output_tokens`, else the backend's. */
  max_completion_tokens: z.number().int().positive().optional(),
  /** Longest context sent, in characters; cut at `[DOC]` boundaries. */
  max_context_chars: z.number().int().positive().default(6000),
});

const TRUNCATED = '...[truncated]';

/** The context cut to `max` characters at `[DOC]` boundaries; a first document that alone is too long is cut hard. */
export function truncateContext(context: string, max: number): string {
  if (context.length <= max) return context;
  const docs = context.split(/(?=\[DOC\])/);
  let out = '';
  for (const doc of docs) {
    if (out.length + doc.length > max) break;
    out += doc;
  }
  return out ? out.trimEnd() : `${context.slice(0, max)}${TRUNCATED}`;
}

export function searchqaScore(prediction: string, golds: string[]): Score {
  const em = exactMatch(prediction, golds, squadNormalize);
  const f1 = tokenF1(prediction, golds, squadNormalize);
  // Containment either way, recorded as the reference does (not used for the score).
  const p = squadNormalize(prediction);
  const subEm =
    contains(prediction, golds, squadNormalize) || golds.some((g) => squadNormalize(g).includes(p) && p !== '') ? 1 : 0;
  return { hard: em, soft: f1, metric: 'EM', details: { em, f1, sub_em: subEm } };
}

/** A SearchQA item from a published record (`key`) or a materialised one (`id`). */
export function searchqaRecord(rec: RawRecord): { id: string; question: string; context: string; answers: string[] } {
  const f = rec.fields;
  const id = f.id ?? f.key;
  if (id === undefined || id === null || id === '')
    throw new DataError("missing field 'id' (or 'key')", rec.where, 'id');
  for (const field of ['question', 'context']) {
    if (typeof f[field] !== 'string' || !(f[field] as string).trim())
      throw new DataError(`missing field '${field}'`, rec.where, field);
  }
  const answers = goldList(f.answers ?? f.answer);
  if (answers.length === 0) throw new DataError("missing field 'answers' (the accepted answers)", rec.where, 'answers');
  return { id: String(id), question: f.question as string, context: f.context as string, answers };
}

export class SearchQaEnv extends QaEnv {
  readonly name = 'searchqa';

  constructor(
    config: ConstructorParameters<typeof QaEnv>[0],
    private readonly o: z.infer<typeof SearchQaOptions>,
    ctx: ConstructorParameters<typeof QaEnv>[2],
  ) {
    super(config, o, ctx);
  }

  toItem(rec: RawRecord): Item {
    return { ...searchqaRecord(rec), type: 'qa' };
  }

  /** The published data comes in several files (one per split): read them all. */
  protected override readRaw(dataPath: string): Promise<RawRecord[]> {
    return readRecordsFrom(dataPath);
  }

  present(item: Item): Presented {
    const golds = item.answers as string[];
    const user = `## Context\n${truncateContext(String(item.context), this.o.max_context_chars)}\n\n## Question\n${item.question}`;
    return {
      user,
      task: String(item.question),
      expected: golds,
      score: (prediction) => searchqaScore(prediction, golds),
    };
  }

  override taskTypes(): string[] {
    return ['qa'];
  }
}

registerEnv({
  name: 'searchqa',
  optionsSchema: SearchQaOptions,
  create: (config, ctx) => new SearchQaEnv(config, envOptions(SearchQaOptions, config), ctx),
});
