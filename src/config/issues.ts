/**
 * Config errors in words: each problem zod finds, with the file that set the key and the key as
 * it was written, what was expected, what was found, and the likely key for a typo.
 */
import type { z } from 'zod';
import { didYouMean } from '../util/suggest.ts';
import { ORIGINAL_MODEL_KEYS } from './original-keys.ts';
import { getPath, type Sources, type Tree } from './tree.ts';

/** Where a dotted key was set (the file, and the key as written there). */
export function sourceOf(sources: Sources, dotted: string): { source: string; written: string } {
  const exact = sources.get(dotted);
  if (exact) return exact;
  for (const [p, s] of sources) {
    if (p.startsWith(`${dotted}.`))
      return { source: s.source, written: s.written.slice(0, s.written.length - (p.length - dotted.length)) || dotted };
  }
  return { source: 'config', written: dotted };
}

/** Keys the schema knows at a dotted path of objects. */
export function knownKeysAt(schema: z.ZodType, parts: PropertyKey[]): string[] {
  let node: unknown = schema;
  const unwrap = (n: unknown): unknown => {
    let cur = n as { def?: { innerType?: unknown; in?: unknown }; shape?: unknown };
    while (cur && !cur.shape && (cur.def?.innerType || cur.def?.in))
      cur = (cur.def.innerType ?? cur.def.in) as typeof cur;
    return cur;
  };
  node = unwrap(node);
  for (const part of parts) {
    const shape = (node as { shape?: Record<string, unknown> }).shape;
    if (!shape) return [];
    node = unwrap(shape[String(part)]);
  }
  const shape = (node as { shape?: Record<string, unknown> }).shape;
  if (shape) return Object.keys(shape);
  // A union (such as a discriminated one): the keys of every option.
  const options = (node as { def?: { options?: unknown[] } }).def?.options ?? [];
  return [
    ...new Set(options.flatMap((o) => Object.keys((unwrap(o) as { shape?: Record<string, unknown> }).shape ?? {}))),
  ];
}

/** The original's keys that the loader accepts at a path beyond the schema's, for suggestions. */
function originalKeysAt(parts: PropertyKey[]): string[] {
  if (parts.length === 0) return ['human_feedback'];
  return parts.length === 1 && parts[0] === 'model' ? Object.keys(ORIGINAL_MODEL_KEYS) : [];
}

/** A key that would hold a secret, in a mapping that names its variable instead: where it goes. */
function keyHint(key: string, known: string[], parts: PropertyKey[]): string | undefined {
  if (!known.includes('api_key_env') || !/(^|_)(api_?)?key$|token|secret|password/i.test(key)) return undefined;
  return `: a key is never written in a config; put it in an environment variable and name that variable in ${[...parts, 'api_key_env'].join('.')}`;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `a list ${JSON.stringify(value)}`;
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

export function formatIssues(
  issues: z.core.$ZodIssue[],
  tree: Tree,
  sources: Sources,
  schema: z.ZodType,
  basePath: PropertyKey[] = [],
): string {
  const lines = issues.map((issue) => {
    const parts = [...basePath, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      return issue.keys
        .map((key) => {
          const dotted = [...parts, key].join('.');
          const s = sourceOf(sources, dotted);
          const known = [...knownKeysAt(schema, issue.path), ...originalKeysAt(parts)];
          return `${s.source}: unknown key '${s.written}'${keyHint(key, known, parts) ?? didYouMean(key, known)}`;
        })
        .join('\n');
    }
    const dotted = parts.join('.');
    const s = sourceOf(sources, dotted);
    const value = getPath(tree, dotted);
    if (issue.code === 'invalid_type') {
      return `${s.source}: ${s.written}: expected ${issue.expected}, got ${describe(value)}`;
    }
    // A discriminated mapping (a scorer's `type`) whose value is none of its choices.
    const choices = issue.code === 'invalid_union' ? (issue as { options?: unknown[] }).options : undefined;
    if (choices?.length) {
      const allowed = choices.map((v) => JSON.stringify(v)).join(', ');
      return `${s.source}: ${s.written}: expected one of ${allowed}, got ${describe(value)}${typeof value === 'string' ? didYouMean(value, choices.map(String)) : ''}`;
    }
    if (issue.code === 'invalid_value') {
      const allowed = issue.values.map((v) => JSON.stringify(v)).join(', ');
      return `${s.source}: ${s.written}: expected one of ${allowed}, got ${describe(value)}${typeof value === 'string' ? didYouMean(value, issue.values.map(String)) : ''}`;
    }
    return `${s.source}: ${s.written}: ${issue.message.replace(/^Invalid input: /, '')}, got ${describe(value)}`;
  });
  return lines.join('\n');
}
