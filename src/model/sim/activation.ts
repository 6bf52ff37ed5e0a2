/**
 * The simulated agent's choice of a skill, from names and descriptions alone: a skill whose
 * description names what the query is about is likely to be loaded, the more words in common the
 * likelier; a description that claims everything ("any", "all kinds of") draws every query, the
 * near misses included; only the best match can load, so a distractor that fits better wins.
 * Deterministic for a (query, descriptions, sample, seed).
 *
 * This is a simulation, so that training a description can be run and tested offline; it says
 * nothing about how a real model chooses skills.
 */
import { unitHash } from '../../util/random.ts';

const STOP = new Set(
  'about above after again also and are because been before being between both but can could does doing down each from have having here into just like make more most much need only other over same should some such than that their them then there these they this those through under until very what when where which while will with would your yours the for you how use used uses using want help please'.split(
    ' ',
  ),
);
/** Words that claim every request. */
const BROAD =
  /\b(?:any|anything|everything|whatever|all kinds|every (?:kind|sort|type|request|task)|general[- ]purpose)\b/i;

/** The content words of a text, as stems (lowercase, a plural's `s` dropped, cut to six letters). */
export function stems(text: string): Set<string> {
  const out = new Set<string>();
  for (const word of text.toLowerCase().match(/[a-z]{4,}/g) ?? [])
    if (!STOP.has(word)) out.add(word.replace(/(?<!s)s$/, '').slice(0, 6));
  return out;
}

/** The content words of a text as written (four letters or more, not stop words, in order, each once). */
export function contentWords(text: string): string[] {
  const out: string[] = [];
  for (const w of text.toLowerCase().match(/[a-z]{4,}/g) ?? []) if (stems(w).size && !out.includes(w)) out.push(w);
  return out;
}

/** How well a description fits a query: the query's words it shares, plus 2 for a claim to everything. */
export function fit(query: string, description: string): number {
  const q = stems(query);
  let shared = 0;
  for (const s of stems(description)) if (q.has(s)) shared++;
  return shared + (BROAD.test(description) ? 2 : 0);
}

/** The skill the simulated agent loads for `query`, or undefined when it loads none. */
export function simLoad(
  query: string,
  skills: readonly { name: string; description: string }[],
  key: { seed: number; sample: number },
): string | undefined {
  let best: { name: string; fit: number; tie: number } | undefined;
  for (const s of skills) {
    const f = fit(query, s.description);
    const tie = unitHash(key.seed, 'tie', s.name, query);
    if (f > 0 && (!best || f > best.fit || (f === best.fit && tie > best.tie))) best = { name: s.name, fit: f, tie };
  }
  if (!best) return undefined;
  const chance = 1 - Math.exp(-0.8 * best.fit);
  return unitHash(key.seed, 'load', query, best.name, key.sample) < chance ? best.name : undefined;
}
