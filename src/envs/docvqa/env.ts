/**
 * DocVQA (reference B.5): a question about one document image, sent to the target as an image
 * part. Hard = ANLS ≥ 0.999, soft = ANLS (τ = 0.5), best over the accepted answers. Items load
 * from materialised split directories (`items.json` written by `skillopt data materialize
 * docvqa`, or the original's CSV files), or from the published Parquet rows, whose embedded
 * image bytes are sent as data URIs.
 */
import path from 'node:path';
import { z } from 'zod';
import { DataError } from '../data/errors.ts';
import { readRecordsFrom, type RawRecord } from '../data/read.ts';
import { resolveImage } from '../images.ts';
import { envOptions } from '../options.ts';
import { QaEnv, type Presented } from '../qa-env.ts';
import { registerEnv } from '../registry.ts';
import { goldList } from '../scoring/golds.ts';
import { anls } from '../scoring/metrics.ts';
import type { Item } from '../types.ts';

export const DocVqaOptions = z.object({
  max_turns: z.number().int().positive().default(1),
  max_completion_tokens: z.number().int().positive().optional(),
  /** ANLS threshold τ: a normalised edit distance at or above it scores 0. */
  anls_threshold: z.number().min(0).max(1).default(0.5),
});

/** A Python literal list of strings, as the original's CSV files store answers: `['a', "b's"]`. */
export function parsePyStringList(text: string): string[] | undefined {
  const t = text.trim();
  if (!t.startsWith('[') || !t.endsWith(']')) return undefined;
  try {
    const parsed: unknown = JSON.parse(t);
    if (Array.isArray(parsed)) return parsed.map(String);
  } catch {
    // single-quoted: parse below
  }
  const out: string[] = [];
  let i = 1;
  const end = t.length - 1;
  while (i < end) {
    while (i < end && /[\s,]/.test(t[i]!)) i++;
    if (i >= end) break;
    const quote = t[i];
    if (quote !== "'" && quote !== '"') return undefined;
    let s = '';
    i++;
    while (i < end && t[i] !== quote) {
      if (t[i] === '\\' && i + 1 < end) {
        const next = t[i + 1]!;
        s += next === 'n' ? '\n' : next === 't' ? '\t' : next;
        i += 2;
      } else s += t[i++];
    }
    if (t[i] !== quote) return undefined;
    i++;
    out.push(s);
  }
  return out;
}

export function docvqaAnswers(value: unknown): string[] {
  if (typeof value === 'string') return parsePyStringList(value) ?? goldList(value);
  return goldList(value);
}

/** Media type of image bytes from their signature. */
export function sniffImageType(bytes: Uint8Array): string {
  if (bytes[0] === 0x89 && bytes[1] === 0x50) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'image/jpeg';
  if (bytes[0] === 0x47 && bytes[1] === 0x49) return 'image/gif';
  if (bytes[0] === 0x52 && bytes[1] === 0x49) return 'image/webp';
  return 'image/png';
}

export class DocVqaEnv extends QaEnv {
  readonly name = 'docvqa';

  constructor(config: ConstructorParameters<typeof QaEnv>[0], private readonly o: z.infer<typeof DocVqaOptions>, ctx: ConstructorParameters<typeof QaEnv>[2]) {
    super(config, o, ctx);
  }

  toItem(rec: RawRecord): Item {
    const f = rec.fields;
    const id = f.questionId ?? f.id;
    if (id === undefined || id === null || id === '') throw new DataError("missing field 'questionId' (or 'id')", rec.where, 'questionId');
    const rawQuestion = typeof f.question === 'string' ? f.question : '';
    const question = rawQuestion.split(/document_path:/i)[0]!.trim();
    if (!question) throw new DataError("missing field 'question'", rec.where, 'question');
    const answers = docvqaAnswers(f.answers ?? f.answer);
    if (answers.length === 0) throw new DataError("missing field 'answers' (the accepted answers)", rec.where, 'answers');
    let image: string | undefined;
    const embedded = f.image as { bytes?: unknown; path?: unknown } | undefined;
    if (embedded && typeof embedded === 'object' && embedded.bytes instanceof Uint8Array) {
      image = `data:${sniffImageType(embedded.bytes)};base64,${Buffer.from(embedded.bytes).toString('base64')}`;
    } else {
      const ref = f.image_path ?? f.document_path;
      if (typeof ref !== 'string' || !ref) throw new DataError("missing field 'image_path' (or embedded 'image' bytes)", rec.where, 'image_path');
      // Relative paths: next to the data file, then its split directory's parent, the config, the working directory.
      const base = path.dirname(rec.where.file);
      image = resolveImage(ref, [base, path.dirname(base), path.dirname(path.dirname(base)), this.ctx.configDir, process.cwd()]);
      if (!image) throw new DataError(`image not found: '${ref}'`, rec.where, 'image_path');
    }
    const topics = Array.isArray(f.question_types) ? f.question_types.map(String).join('|') : undefined;
    const type = String(f.topic || f.category || topics || 'docvqa');
    return {
      id: String(id),
      type,
      question,
      answers,
      image,
      ...(f.docId !== undefined ? { docId: f.docId } : {}),
      ...(f.ucsf_document_id !== undefined ? { ucsf_document_id: f.ucsf_document_id } : {}),
      ...(f.ucsf_document_page_no !== undefined ? { ucsf_document_page_no: f.ucsf_document_page_no } : {}),
    };
  }

  /** The published data comes in several Parquet shards: read them all. */
  protected override readRaw(dataPath: string): Promise<RawRecord[]> {
    return readRecordsFrom(dataPath);
  }

  present(item: Item): Presented {
    const golds = item.answers as string[];
    const image = String(item.image);
    const text = `${item.question}\n\nGive the final answer inside <answer></answer> tags.`;
    return {
      user: [
        { type: 'text', text },
        { type: 'image', image },
      ],
      task: String(item.question),
      expected: golds,
      score: (prediction) => {
        const s = anls(prediction, golds, this.o.anls_threshold);
        return { hard: s >= 0.999 ? 1 : 0, soft: s, metric: 'ANLS', details: { anls: s } };
      },
    };
  }
}

registerEnv({
  name: 'docvqa',
  optionsSchema: DocVqaOptions,
  create: (config, ctx) => new DocVqaEnv(config, envOptions(DocVqaOptions, config), ctx),
});
