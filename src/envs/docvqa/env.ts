/**
 * DocVQA (reference B.5): a question about one document image, sent to the target as an image
 * part. Hard = ANLS ≥ 0.999, soft = ANLS (τ = 0.5), best over the accepted answers. Items load
 * from materialised split directories (`items.json` written by `skillopt data materialize
 * docvqa`, or the original's CSV files), or from the published Parquet rows, whose embedded
 * image bytes are sent as data URIs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DataError } from '../data/errors.ts';
import { dataFilesUnder, readRecords, type RawRecord } from '../data/read.ts';
import { isRemoteImage, resolveImage } from '../images.ts';
import { envOptions } from '../options.ts';
import { QaEnv, type Presented } from '../qa-env.ts';
import { registerEnv } from '../registry.ts';
import { goldList } from '../scoring/golds.ts';
import { anls } from '../scoring/metrics.ts';
import type { Item } from '../types.ts';

export const DocVqaOptions = z.object({
  /** Turns at most; a later turn only asks again when the reply had no answer in the required form. */
  max_turns: z.number().int().positive().default(1),
  /** Output token cap of each target call; unset = the role's `max_output_tokens`, else the backend's. */
  max_completion_tokens: z.number().int().positive().optional(),
  /** ANLS threshold τ: a normalised edit distance at or above it scores 0. */
  anls_threshold: z.number().min(0).max(1).default(0.5),
  /** The image `detail` sent with the page (OpenAI models: the resolution they see); unset sends none. */
  image_detail: z.enum(['low', 'high', 'auto']).optional(),
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

/**
 * The published records: a file, or every data file under a directory (the Parquet shards, or
 * the task's `*_v1.0.json` files), leaving out the OCR results shipped beside the annotations.
 */
export async function readDocVqaRaw(dataPath: string): Promise<RawRecord[]> {
  if (!fs.statSync(dataPath).isDirectory()) return readRecords(dataPath);
  const out: RawRecord[] = [];
  for (const file of dataFilesUnder(dataPath)) {
    if (path.relative(dataPath, file).split(path.sep).includes('ocr_results')) continue;
    out.push(...(await readRecords(file)));
  }
  return out;
}

/** Where a record's page image is: embedded bytes, a local file, or a URL. */
export type PageImage = { bytes: Uint8Array } | { file: string } | { url: string };

/**
 * The page image of a record: embedded bytes (the published Parquet rows), a path in `image`
 * (the task's `*_v1.0.json` files: relative to that file, e.g. `documents/xxx.png`), or a path in
 * `image_path` / `document_path` (split files: relative to the file, then to `bases`).
 */
export function pageImage(rec: RawRecord, id: string, bases: readonly string[] = []): PageImage {
  const f = rec.fields;
  const embedded = f.image as { bytes?: unknown } | undefined;
  if (embedded && typeof embedded === 'object' && embedded.bytes instanceof Uint8Array)
    return { bytes: embedded.bytes };
  const dir = path.dirname(rec.where.file);
  const [field, ref, lookIn] =
    typeof f.image === 'string' && f.image.trim()
      ? ['image', f.image.trim(), [dir]]
      : ['image_path', f.image_path ?? f.document_path, [dir, ...bases]];
  if (typeof ref !== 'string' || !ref)
    throw new DataError("no image: expected 'image' (a path, or embedded bytes) or 'image_path'", rec.where, 'image');
  const found = resolveImage(ref, lookIn as string[]);
  if (!found)
    throw new DataError(
      `image of question ${id} not found: '${ref}' (${path.isAbsolute(ref) ? 'no such file' : `looked for ${path.resolve(dir, ref)}`})`,
      rec.where,
      field as string,
    );
  return isRemoteImage(found) ? { url: found } : { file: found };
}

export class DocVqaEnv extends QaEnv {
  readonly name = 'docvqa';

  constructor(
    config: ConstructorParameters<typeof QaEnv>[0],
    private readonly o: z.infer<typeof DocVqaOptions>,
    ctx: ConstructorParameters<typeof QaEnv>[2],
  ) {
    super(config, o, ctx);
  }

  toItem(rec: RawRecord): Item {
    const f = rec.fields;
    const id = f.questionId ?? f.id;
    if (id === undefined || id === null || id === '')
      throw new DataError("missing field 'questionId' (or 'id')", rec.where, 'questionId');
    const rawQuestion = typeof f.question === 'string' ? f.question : '';
    const question = rawQuestion.split(/document_path:/i)[0]!.trim();
    if (!question) throw new DataError("missing field 'question'", rec.where, 'question');
    const answers = docvqaAnswers(f.answers ?? f.answer);
    if (answers.length === 0)
      throw new DataError("missing field 'answers' (the accepted answers)", rec.where, 'answers');
    // Split files' relative paths: next to the file, then its split directory's parent, the config, the working directory.
    const base = path.dirname(rec.where.file);
    const page = pageImage(rec, String(id), [
      path.dirname(base),
      path.dirname(path.dirname(base)),
      this.ctx.configDir,
      process.cwd(),
    ]);
    const image =
      'bytes' in page
        ? `data:${sniffImageType(page.bytes)};base64,${Buffer.from(page.bytes).toString('base64')}`
        : 'file' in page
          ? page.file
          : page.url;
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

  protected override readRaw(dataPath: string): Promise<RawRecord[]> {
    return readDocVqaRaw(dataPath);
  }

  present(item: Item): Presented {
    const golds = item.answers as string[];
    const image = String(item.image);
    const text = `${item.question}\n\nGive the final answer inside <answer></answer> tags.`;
    return {
      user: [
        { type: 'text', text },
        { type: 'image', image, ...(this.o.image_detail ? { detail: this.o.image_detail } : {}) },
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
