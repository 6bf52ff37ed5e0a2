/** A skill document: loading, hashing, token counting and diffs. */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { UserError } from '../errors.ts';

// Loaded on first use: the tokenizer's tables take about 60 MB and a third of a second, which a
// command that counts no tokens (or has not yet) should not pay.
const require = createRequire(import.meta.url);
let bpe: ReturnType<typeof tokenizer> | undefined;
let diff: typeof import('diff') | undefined;

/**
 * Reads the initial skill. An empty path or a missing file is an error unless `startBlank`
 * is set, in which case training starts from an empty skill.
 */
export function loadSkill(file: string, options: { startBlank?: boolean; key?: string } = {}): string {
  const key = options.key ?? 'env.skill_init';
  if (!file) {
    if (options.startBlank) return '';
    throw new UserError(
      `${key} is not set: name the initial skill file, or set env.start_blank: true to start from an empty skill`,
    );
  }
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && options.startBlank) return '';
    if (code === 'ENOENT') {
      throw new UserError(
        `skill file not found: ${file} (from ${key}); create it, or set env.start_blank: true to start from an empty skill`,
      );
    }
    throw new UserError(`cannot read skill file ${file} (from ${key}): ${(err as Error).message}`);
  }
}

/** First 16 hex characters of SHA-256 over the UTF-8 text, as the original. */
export function skillHash(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex').slice(0, 16);
}

/** Special tokens are counted as the text they are: a skill or a task may quote one (`<|endoftext|>`). */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * The build's copy of the tokenizer's byte-pair table (scripts/build.js). The package ships the
 * table as a JavaScript array of 2.4 MB, which node takes about 0.35 s of CPU to compile; as JSON
 * it parses in a fifth of that. Run from the sources, there is no copy: the package's own table.
 */
export const TOKENIZER_TABLE = fileURLToPath(new URL('../tokenizer/o200k_base.json', import.meta.url));

function tokenizer(): { countTokens(text: string, options?: typeof AS_TEXT): number } {
  let table: string;
  try {
    table = fs.readFileSync(TOKENIZER_TABLE, 'utf8');
  } catch {
    return require('gpt-tokenizer') as typeof import('gpt-tokenizer');
  }
  const { GptEncoding } = require('gpt-tokenizer/GptEncoding') as typeof import('gpt-tokenizer/GptEncoding');
  return GptEncoding.getEncodingApi('o200k_base', () => JSON.parse(table) as (string | number[])[]);
}

/** Tokens of the text (o200k_base, the encoding of current OpenAI models). */
export function countTokens(text: string): number {
  if (!text) return 0;
  bpe ??= tokenizer();
  return bpe.countTokens(text, AS_TEXT);
}

/** A unified diff between two versions of a skill. */
export function unifiedDiff(
  before: string,
  after: string,
  labels: { before?: string; after?: string } = {},
  context = 3,
): string {
  diff ??= require('diff') as typeof import('diff');
  return diff.createTwoFilesPatch(
    labels.before ?? 'before',
    labels.after ?? 'after',
    before,
    after,
    undefined,
    undefined,
    { context },
  );
}
