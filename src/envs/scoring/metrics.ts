/**
 * The comparisons behind the built-in scorers. Each takes the extracted prediction and the
 * list of acceptable answers ("golds") and returns a number in [0, 1]; with several golds the
 * best match counts.
 */
import { distance } from 'fastest-levenshtein';
import { basicNormalize } from './normalize.ts';

const tokens = (text: string) => text.split(/\s+/).filter(Boolean);

/** 1 when the normalised prediction equals a normalised gold. */
export function exactMatch(prediction: string, golds: readonly string[], norm: (s: string) => string): number {
  const p = norm(prediction);
  return golds.some((g) => norm(g) === p) ? 1 : 0;
}

/** Token F1 of two normalised texts: both empty = 1, one empty = 0. */
export function f1Pair(prediction: string, gold: string): number {
  const p = tokens(prediction);
  const g = tokens(gold);
  if (p.length === 0 || g.length === 0) return p.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of p) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      common++;
      counts.set(t, c - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / p.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}

/** Best token F1 over the golds, after normalisation. */
export function tokenF1(prediction: string, golds: readonly string[], norm: (s: string) => string): number {
  const p = norm(prediction);
  return golds.reduce((best, g) => Math.max(best, f1Pair(p, norm(g))), 0);
}

/** 1 when a normalised gold occurs in the normalised prediction (an empty gold only in an empty prediction). */
export function contains(prediction: string, golds: readonly string[], norm: (s: string) => string): number {
  const p = norm(prediction);
  return golds.some((g) => {
    const n = norm(g);
    return n === '' ? p === '' : p.includes(n);
  })
    ? 1
    : 0;
}

/**
 * ANLS (average normalised Levenshtein similarity, the DocVQA metric) of one prediction:
 * texts trimmed, lower-cased, whitespace collapsed; per gold 1 − distance / longer length,
 * counted only when the normalised distance is below `threshold` (τ, 0.5 in DocVQA); best gold.
 */
export function anls(prediction: string, golds: readonly string[], threshold = 0.5): number {
  const p = basicNormalize(prediction);
  let best = 0;
  for (const gold of golds) {
    const g = basicNormalize(gold);
    let score: number;
    if (!p && !g) score = 1;
    else if (!p || !g) score = 0;
    else {
      const nl = distance(p, g) / Math.max(p.length, g.length);
      score = nl < threshold ? 1 - nl : 0;
    }
    best = Math.max(best, score);
  }
  return best;
}

const SCALE: Record<string, number> = { thousand: 1e3, million: 1e6, billion: 1e9, trillion: 1e12 };
const NUMBER =
  /(?<![\w.])([-+\u2212]?)\s*[$€£¥]?\s*((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE]([-+]?\d+))?(?:\s*(%|percent\b))?(?:\s*(thousand|million|billion|trillion)s?\b)?/gi;

/**
 * The number a text states: the last number in it, with thousands separators, a sign (also
 * U+2212), a currency symbol, an exponent, a percent sign (dropped: "45%" reads 45), and, when
 * `scaleWords` is set, a following thousand / million / billion / trillion ("3.5 million" reads
 * 3500000). Other units ("12 kg") are ignored. Undefined when the text holds no number.
 */
export function parseNumber(text: string, scaleWords = true): number | undefined {
  const all = [...text.matchAll(NUMBER)];
  const m = all.at(-1);
  if (!m) return undefined;
  const [, sign, digits, exp, , scale] = m;
  let value = Number(digits!.replace(/,/g, ''));
  if (exp) value *= 10 ** Number(exp);
  if (scaleWords && scale) value *= SCALE[scale.toLowerCase()]!;
  if (sign === '-' || sign === '\u2212') value = -value;
  return Number.isFinite(value) ? value : undefined;
}

export function numericClose(a: number, b: number, absTol: number, relTol: number): boolean {
  return Math.abs(a - b) <= Math.max(absTol, relTol * Math.abs(b));
}

/** 1 when the prediction's number is within tolerance of a gold's number. */
export function numericMatch(
  prediction: string,
  golds: readonly string[],
  opts: { absTol: number; relTol: number; scaleWords: boolean },
): number {
  const p = parseNumber(prediction, opts.scaleWords);
  if (p === undefined) return 0;
  return golds.some((g) => {
    const v = parseNumber(g, opts.scaleWords);
    return v !== undefined && numericClose(p, v, opts.absTol, opts.relTol);
  })
    ? 1
    : 0;
}

/** A choice label as written: trimmed, upper case, without surrounding brackets or a trailing '.', ')' or ':'. */
export function normalizeLabel(text: string): string {
  return text
    .trim()
    .toUpperCase()
    .replace(/^[([]\s*/, '')
    .replace(/[.):\]]+$/, '')
    .trim();
}

export interface Choice {
  label: string;
  text: string;
}

/**
 * The label an answer picks: the answer itself when it is a valid label; else the label of the
 * choice whose text it equals (ignoring case); else its first token when that is a valid label;
 * else the normalised answer (which then matches nothing).
 */
export function pickLabel(answer: string, choices: readonly Choice[]): string {
  const labels = new Set(
    choices.length ? choices.map((c) => normalizeLabel(c.label)) : 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split(''),
  );
  const norm = normalizeLabel(answer);
  if (labels.has(norm)) return norm;
  const byText = choices.find((c) => basicNormalize(c.text) === basicNormalize(answer));
  if (byText) return normalizeLabel(byText.label);
  const first = normalizeLabel(answer.trim().split(/\s+/)[0] ?? '');
  if (labels.has(first)) return first;
  return norm;
}
