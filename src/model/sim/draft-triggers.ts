/**
 * The simulated optimizer drafting a trigger eval set: requests built from the words of the
 * skill's own text (should load) and from the other skills' descriptions (near misses, should
 * not). A simulation, so that the drafting command runs offline; its queries are word lists,
 * not what a person would type.
 */
import type { OptimizerMeta } from '../../protocol/optimizer.ts';
import { contentWords } from './activation.ts';

/** `count` requests of three words each, taken in turn from `words`. */
function requests(words: string[], count: number, opener: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < count && words.length >= 3; i++) {
    const pick = [0, 1, 2].map((k) => words[(i * 3 + k) % words.length]!);
    out.push(`${opener} ${pick.join(' ')}`);
  }
  return [...new Set(out)];
}

export function draftTriggers(meta: Extract<OptimizerMeta, { kind: 'draft_triggers' }>): unknown {
  const own = contentWords(meta.skill.replace(/^---[\s\S]*?---/, ''));
  const near = meta.others.flatMap((o) => contentWords(o.description)).filter((w) => !own.includes(w));
  return {
    queries: [
      ...requests(own, meta.count, 'please help me with').map((query) => ({ query, should_trigger: true })),
      ...requests(near, meta.count, 'can you do this:').map((query) => ({ query, should_trigger: false })),
    ],
  };
}
