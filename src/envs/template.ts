/**
 * `{{field}}` templates: the user prompt of the `tasks` env and the prompt files of the
 * benchmarks. A placeholder names a field (dotted paths reach into objects); a field that is
 * missing is an error rather than an empty string, so a typo cannot silently blank a prompt.
 * Written by hand: mustache-style packages HTML-escape by default and render missing fields as
 * empty, the two things this must not do.
 */
import { stringify } from './scoring/extract.ts';

const PLACEHOLDER = /\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g;

/** The field names a template uses, in order of first use. */
export function placeholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

export function lookup(values: Record<string, unknown>, dotted: string): unknown {
  if (dotted in values) return values[dotted];
  let cur: unknown = values;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Fields of `template` that `values` lacks (undefined or null). */
export function missingFields(template: string, values: Record<string, unknown>): string[] {
  return placeholders(template).filter((name) => {
    const v = lookup(values, name);
    return v === undefined || v === null;
  });
}

/** Fills the placeholders; lists and objects are written as JSON. Throws on a missing field. */
export function render(template: string, values: Record<string, unknown>): string {
  const missing = missingFields(template, values);
  if (missing.length)
    throw new Error(`template field${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')}`);
  return template.replace(PLACEHOLDER, (_m, name: string) => stringify(lookup(values, name)));
}
