/** A skill document: loading, hashing, token counting and diffs. */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createTwoFilesPatch } from 'diff';
import { countTokens as countBpe } from 'gpt-tokenizer';
import { UserError } from '../errors.ts';

/**
 * Reads the initial skill. An empty path or a missing file is an error unless `startBlank`
 * is set, in which case training starts from an empty skill.
 */
export function loadSkill(file: string, options: { startBlank?: boolean; key?: string } = {}): string {
  const key = options.key ?? 'env.skill_init';
  if (!file) {
    if (options.startBlank) return '';
    throw new UserError(`${key} is not set: name the initial skill file, or set env.start_blank: true to start from an empty skill`);
  }
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && options.startBlank) return '';
    if (code === 'ENOENT') {
      throw new UserError(`skill file not found: ${file} (from ${key}); create it, or set env.start_blank: true to start from an empty skill`);
    }
    throw new UserError(`cannot read skill file ${file} (from ${key}): ${(err as Error).message}`);
  }
}

/** First 16 hex characters of SHA-256 over the UTF-8 text, as the original. */
export function skillHash(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex').slice(0, 16);
}

/** Tokens of the text (o200k_base, the encoding of current OpenAI models). */
export function countTokens(text: string): number {
  return text ? countBpe(text) : 0;
}

/** A unified diff between two versions of a skill. */
export function unifiedDiff(before: string, after: string, labels: { before?: string; after?: string } = {}, context = 3): string {
  return createTwoFilesPatch(labels.before ?? 'before', labels.after ?? 'after', before, after, undefined, undefined, { context });
}
