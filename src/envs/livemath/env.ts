/**
 * LiveMathematicianBench (reference B.6): multiple-choice questions on recent theorems. The
 * target answers with a label in `<answer>` tags; hard = soft = 1 when the label it picks is the
 * correct one. Options are shuffled per item and per rollout seed and relabelled A, B, C… (so a
 * letter carries no signal). Items load from materialised split directories or from the
 * published `qa_*_final.json` files (one file, or a directory searched for them), where the
 * right option sits apart in `mcq.correct_choice` and `mcq.choices` lists only the wrong ones.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DataError } from '../data/errors.ts';
import { readRecords, type RawRecord } from '../data/read.ts';
import { envOptions } from '../options.ts';
import { QaEnv, type Presented } from '../qa-env.ts';
import { registerEnv } from '../registry.ts';
import { normalizeLabel, pickLabel, type Choice } from '../scoring/metrics.ts';
import { stringify } from '../scoring/extract.ts';
import { Rng, seedFrom } from '../../util/random.ts';
import type { Item, RolloutContext } from '../types.ts';

export const LiveMathOptions = z.object({
  /** Turns at most; a later turn only asks again when the reply had no answer in the required form. */
  max_turns: z.number().int().positive().default(1),
  /** Output token cap of each target call; unset = the role's `max_output_tokens`, else the backend's. */
  max_completion_tokens: z.number().int().positive().optional(),
  /** Shuffle and relabel the options in every rollout (seeded by the rollout seed and the item id). */
  shuffle_choices: z.boolean().default(true),
  /** Show the theorem the question is about. */
  use_theorem: z.boolean().default(false),
  /** Show the proof sketch. */
  use_sketch: z.boolean().default(false),
});

export interface MathItem extends Item {
  question: string;
  choices: Choice[];
  correct_choice: Choice;
  theorem_type: string[];
  theorem?: string;
  sketch?: string;
}

const LABELS = 'ABCDEFG';

/** Choices as `{label, text}` from a list of texts, a list of `{label, text}` objects, or a label → text mapping. */
export function parseChoices(value: unknown): Choice[] {
  if (Array.isArray(value)) {
    return value.map((c, i) => {
      if (c && typeof c === 'object') {
        const o = c as Record<string, unknown>;
        return {
          label: normalizeLabel(String(o.label ?? LABELS[i] ?? '')),
          text: stringify(o.text ?? o.content ?? '').trim(),
        };
      }
      return { label: LABELS[i] ?? String(i + 1), text: stringify(c).trim() };
    });
  }
  if (value && typeof value === 'object')
    return Object.entries(value).map(([label, text]) => ({
      label: normalizeLabel(label),
      text: stringify(text).trim(),
    }));
  return [];
}

const byLabel = (a: Choice, b: Choice) =>
  (LABELS.indexOf(a.label) + 1 || LABELS.length + 1) - (LABELS.indexOf(b.label) + 1 || LABELS.length + 1);

/**
 * The options with the correct one among them, in label order. The published files keep the
 * right option apart (`mcq.correct_choice`, label and text) and list only the wrong ones in
 * `mcq.choices`; other data lists every option and names the right one by label.
 */
function withCorrect(
  rec: RawRecord,
  listed: Choice[],
  value: unknown,
): { choices: Choice[]; correct: Choice } | undefined {
  let label: string;
  let text = '';
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    label = normalizeLabel(String(o.label ?? ''));
    text = stringify(o.text ?? o.content ?? '').trim();
  } else if (typeof value === 'string' && value.trim()) {
    label = pickLabel(value, listed);
  } else return undefined;
  if (!label) return undefined;
  const same = listed.find((c) => c.label === label);
  if (same) {
    if (text && same.text !== text) {
      throw new DataError(
        `'correct_choice' ${label} says "${text}" but option ${label} in 'choices' says "${same.text}"`,
        rec.where,
        'correct_choice',
      );
    }
    return { choices: listed, correct: same };
  }
  if (!text) return undefined;
  const correct = { label, text };
  return { choices: [...listed, correct].sort(byLabel), correct };
}

/** The theorem or sketch as text: a string, or an extracted environment (`{content, …}`). */
function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'object' && !Array.isArray(value) && 'content' in value)
    return stringify((value as { content: unknown }).content).trim();
  return stringify(value).trim();
}

/** A record with no question at all is not a QA item (dropped); one with a question must be complete. */
export function toMathItem(rec: RawRecord): MathItem | undefined {
  const f = rec.fields;
  const mcq = (f.mcq && typeof f.mcq === 'object' ? f.mcq : f) as Record<string, unknown>;
  const question =
    typeof mcq.question === 'string'
      ? mcq.question.trim()
      : mcq.question === undefined || mcq.question === null
        ? ''
        : stringify(mcq.question);
  if (!question) return undefined;
  const listed = parseChoices(mcq.choices).filter((c) => c.text);
  const options = withCorrect(rec, listed, mcq.correct_choice ?? mcq.answer);
  if (!options)
    throw new DataError(
      "missing or unknown 'correct_choice' (a label among the choices, or {label, text})",
      rec.where,
      'correct_choice',
    );
  if (options.choices.length < 2)
    throw new DataError(
      "missing field 'choices' (at least two options, the correct one included)",
      rec.where,
      'choices',
    );
  const month = f.month === undefined || f.month === null ? '' : String(f.month);
  const no = f.no ?? rec.where.index;
  // The original's id is <month>:<no> (the id manifests use it); a record without both keeps its own id.
  const hasNo = f.no !== undefined && f.no !== null;
  const id =
    month && hasNo
      ? `${month}:${no}`
      : f.id !== undefined && f.id !== null && f.id !== ''
        ? String(f.id)
        : month
          ? `${month}:${no}`
          : String(no);
  const types = Array.isArray(f.theorem_type)
    ? f.theorem_type.map(String)
    : f.theorem_type
      ? [String(f.theorem_type)]
      : [];
  return {
    id,
    type: types[0] ?? 'math_mcq',
    month,
    no: no as number,
    paper_link: f.paper_link ?? '',
    theorem: textOf(f.theorem),
    sketch: textOf(f.sketch),
    theorem_type: types,
    question,
    choices: options.choices,
    correct_choice: options.correct,
    ...(f.source_path ? { source_path: f.source_path } : {}),
  };
}

/** The published files: `qa_*_final.json` under a directory (searched recursively), or one file. */
export async function readLiveMathRaw(dataPath: string): Promise<RawRecord[]> {
  const files = fs.statSync(dataPath).isDirectory()
    ? (fs.readdirSync(dataPath, { recursive: true }) as string[])
        .filter((f) => /(^|[\\/])qa_[^\\/]*_final\.json$/.test(f))
        .sort()
        .map((f) => path.join(dataPath, f))
    : [dataPath];
  if (files.length === 0) throw new DataError(`no qa_*_final.json files under ${dataPath}`);
  const out: RawRecord[] = [];
  for (const file of files) {
    // The month of a monthly file: its directory (data/202511/) or its name (qa_202511_final.json).
    const dir = path.basename(path.dirname(file));
    const month = /^\d{6}$/.test(dir) ? dir : /^qa_(\d{6})_final\.json$/.exec(path.basename(file))?.[1];
    for (const rec of await readRecords(file))
      out.push({ ...rec, fields: { month, ...rec.fields, source_path: file } });
  }
  return out;
}

/** The options in a seeded order, relabelled A, B, C…; the correct one follows its text. */
export function shuffleChoices(item: MathItem, seed: number): { choices: Choice[]; correct: Choice } {
  const order = new Rng(seedFrom(seed, item.id)).shuffle(item.choices);
  const choices = order.map((c, i) => ({ label: LABELS[i] ?? String(i + 1), text: c.text }));
  const correct = choices[order.indexOf(item.choices.find((c) => c.label === item.correct_choice.label)!)]!;
  return { choices, correct };
}

export class LiveMathEnv extends QaEnv {
  readonly name = 'livemathematicianbench';

  constructor(
    config: ConstructorParameters<typeof QaEnv>[0],
    private readonly o: z.infer<typeof LiveMathOptions>,
    ctx: ConstructorParameters<typeof QaEnv>[2],
  ) {
    super(config, o, ctx);
  }

  toItem(rec: RawRecord): Item {
    const item = toMathItem(rec);
    if (!item) throw new DataError("missing field 'question' (or mcq.question)", rec.where, 'question');
    return item;
  }

  protected override async readRaw(dataPath: string): Promise<RawRecord[]> {
    // Records without a question are not MCQ items in the published files: leave them out.
    return (await readLiveMathRaw(dataPath)).filter((rec) => toMathItem(rec) !== undefined);
  }

  present(raw: Item, ctx: RolloutContext): Presented {
    const item = raw as MathItem;
    const { choices, correct } = this.o.shuffle_choices
      ? shuffleChoices(item, ctx.seed)
      : { choices: item.choices, correct: item.correct_choice };
    const parts = [
      `## Question\n${item.question}`,
      `## Choices\n${choices.map((c) => `${c.label}. ${c.text}`).join('\n')}`,
    ];
    if (this.o.use_theorem && item.theorem) parts.push(`## Theorem\n${item.theorem}`);
    if (this.o.use_sketch && item.sketch) parts.push(`## Proof Sketch\n${item.sketch}`);
    const user = parts.join('\n\n');
    return {
      user,
      task: user,
      expected: `${correct.label}. ${correct.text}`,
      score: (prediction) => {
        const picked = pickLabel(prediction, choices);
        const hard = picked === correct.label ? 1 : 0;
        return {
          hard,
          soft: hard,
          metric: 'MCQ',
          details: {
            predicted_label: picked,
            predicted_text: choices.find((c) => c.label === picked)?.text ?? '',
            correct_label: correct.label,
            correct_text: correct.text,
          },
        };
      },
    };
  }
}

registerEnv({
  name: 'livemathematicianbench',
  aliases: ['livemath', 'livemathbench'],
  optionsSchema: LiveMathOptions,
  create: (config, ctx) => new LiveMathEnv(config, envOptions(LiveMathOptions, config), ctx),
});
