/**
 * Answer extraction: which part of the model's reply is the answer. A tag (`<answer>…</answer>`,
 * the last one by default), a regular expression (its first group, last match), the last
 * non-empty line, a field of a JSON object, or the whole reply. When the rule finds nothing the
 * fallback applies, and the result says so (the optimizer is told the format was not followed).
 */
import { z } from 'zod';
import { extractJson } from '../../model/json-extract.ts';

export const ExtractSchema = z
  .object({
    /** How the answer is taken from the reply: `tag` (`<answer>…</answer>`), `regex`, `last_line`, `json_field`, or `none` (the whole reply). */
    mode: z.enum(['tag', 'regex', 'last_line', 'json_field', 'none']).default('tag'),
    /** Tag name for `tag` mode. */
    tag: z
      .string()
      .regex(/^[A-Za-z][\w.-]*$/, 'a tag name such as answer')
      .default('answer'),
    /** Which tag when there are several. */
    which: z.enum(['last', 'first']).default('last'),
    /** Regular expression for `regex` mode; its first capture group is the answer (else the whole match). */
    pattern: z.string().default(''),
    /** Flags of `pattern` (`i`: ignore case). */
    flags: z.string().default('i'),
    /** Dotted path of the answer in the JSON object, for `json_field` mode. */
    field: z.string().default('answer'),
    /** What to use when the rule finds nothing. */
    fallback: z.enum(['last_line', 'whole', 'empty']).default('last_line'),
  })
  .strict()
  .superRefine((rule, ctx) => {
    if (rule.mode !== 'regex') return;
    if (!rule.pattern)
      ctx.addIssue({
        code: 'custom',
        path: ['pattern'],
        message: 'extract mode regex needs a pattern (its first group is the answer)',
      });
    else {
      try {
        new RegExp(rule.pattern, rule.flags);
      } catch (err) {
        ctx.addIssue({
          code: 'custom',
          path: ['pattern'],
          message: `not a valid regular expression: ${(err as Error).message}`,
        });
      }
    }
  });
export type ExtractRule = z.infer<typeof ExtractSchema>;

export interface Extracted {
  answer: string;
  /** False when the rule found nothing and the fallback was used. */
  found: boolean;
}

export function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.at(-1) ?? '';
}

/** The text inside `<tag>…</tag>` (case-insensitive), last or first occurrence. */
export function extractTag(text: string, tag = 'answer', which: 'last' | 'first' = 'last'): string | undefined {
  const escaped = tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const all = [...text.matchAll(new RegExp(`<${escaped}>([\\s\\S]*?)</${escaped}>`, 'gi'))];
  const hit = which === 'last' ? all.at(-1) : all[0];
  return hit ? hit[1]!.trim() : undefined;
}

export function getPath(value: unknown, dotted: string): unknown {
  let cur = value;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

export function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function byRule(text: string, rule: ExtractRule): string | undefined {
  switch (rule.mode) {
    case 'tag':
      return extractTag(text, rule.tag, rule.which);
    case 'regex': {
      const re = new RegExp(rule.pattern, rule.flags.includes('g') ? rule.flags : `${rule.flags}g`);
      const last = [...text.matchAll(re)].at(-1);
      return last ? (last[1] ?? last[0]).trim() : undefined;
    }
    case 'last_line':
      return lastLine(text) || undefined;
    case 'json_field': {
      const obj = extractJson(text);
      const v = obj === undefined ? undefined : getPath(obj, rule.field);
      return v === undefined ? undefined : stringify(v).trim();
    }
    case 'none':
      return text.trim();
  }
}

export function extractAnswer(text: string, rule: ExtractRule): Extracted {
  const hit = byRule(text, rule);
  if (hit !== undefined) return { answer: hit, found: true };
  const answer = rule.fallback === 'last_line' ? lastLine(text) : rule.fallback === 'whole' ? text.trim() : '';
  return { answer, found: false };
}

/** The reference's rule for the QA benchmarks: last `<answer>` tag, else the last non-empty line. */
export const TAG_RULE: ExtractRule = ExtractSchema.parse({});
