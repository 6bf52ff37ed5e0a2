/**
 * Surface-form probes: a request recast so that it asks the same thing in another shape. A skill
 * whose gain holds only for the shape its training items had has learned their surface, not the
 * task. The forms are rules (no model call), deterministic for an item and a form:
 * - `reframe`: a lead-in sentence before the request;
 * - `wrap`: the request inside a delimited block;
 * - `delimiters`: its quotes, colons and list markers exchanged for equivalents (when it has any);
 * - `shuffle_options`: the options of a multiple-choice item in another order, the expected label
 *   moved with its option (the env does this: only it knows where its options are).
 */
import { PROBE_FORMS, type ProbeForm } from '../config/audit-schema.ts';
import type { Item } from '../envs/types.ts';
import { Rng } from '../util/random.ts';

const LEAD_INS = [
  'Here is a request for you.',
  'A colleague passed this on to you:',
  'Please handle the following.',
  'Next item in the queue.',
];

const WRAPS: [string, string][] = [
  ['<request>\n', '\n</request>'],
  ['-----\n', '\n-----'],
  ['"""\n', '\n"""'],
];

/** The request text in the given form; undefined when the form does not apply to it (or is the env's to make). */
export function recast(text: string, form: ProbeForm, key: string): string | undefined {
  const rng = new Rng(`probe:${form}:${key}`);
  switch (form) {
    case 'reframe':
      return `${rng.pick(LEAD_INS)}\n\n${text}`;
    case 'wrap': {
      const [open, close] = rng.pick(WRAPS);
      return `${open}${text}${close}`;
    }
    case 'delimiters': {
      const out = swapDelimiters(text);
      return out === text ? undefined : out;
    }
    case 'shuffle_options':
      return undefined;
  }
}

/** Double quotes to single, `key: value` to `key - value`, `-` list markers to `*` (and back). */
export function swapDelimiters(text: string): string {
  return text
    .replace(/"([^"\n]*)"/g, "'$1'")
    .replace(
      /^(\s*)([-*])(\s+)/gm,
      (_, indent: string, marker: string, space: string) => `${indent}${marker === '-' ? '*' : '-'}${space}`,
    )
    .replace(/^([^\s:][^:\n]{0,40}):(\s)/gm, '$1 -$2');
}

/**
 * A fresh order of `n` options (never the given one when n > 1): `order[k]` is the index of the
 * option now at position k.
 */
export function shuffledOrder(n: number, key: string): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  if (n < 2) return order;
  const rng = new Rng(`probe:shuffle_options:${key}`);
  const shuffled = rng.shuffle([...order]);
  // Rotating by one when the shuffle kept every option in place.
  return shuffled.every((v, i) => v === i) ? order.map((i) => (i + 1) % n) : shuffled;
}

/** A variant's item id: its item's, and the form. */
export function probeId(id: string, form: ProbeForm): string {
  return `${id}~${form}`;
}

/** The item a variant's id names, made again from the items by id: how a worker that has the data finds a variant. */
export function variantOf(
  id: string,
  items: ReadonlyMap<string, Item>,
  env: { probe?(item: Item, form: ProbeForm): Item | undefined },
): Item | undefined {
  const at = id.lastIndexOf('~');
  const form = id.slice(at + 1) as ProbeForm;
  const item = at > 0 && PROBE_FORMS.includes(form) ? items.get(id.slice(0, at)) : undefined;
  return item && env.probe?.(item, form);
}
