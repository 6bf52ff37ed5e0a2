/**
 * The audit's look at an accepted gain, once the gate has scored it: does it hold under a second,
 * independent scorer (`second_scorer`), and on requests recast in another surface form
 * (`probes`)? These cores take scores already measured; `src/engine/step/gain-audit.ts` measures
 * them. Both give a flag at worst: a gain worth a second look, not proof of a hack.
 */
import type { ProbeForm } from '../config/audit-schema.ts';
import type { Verdict } from './verdict.ts';

/** One item's score under the skill the step started from and under the candidate. */
export interface ScorePair {
  current: number;
  candidate: number;
}

export interface RescoredItem {
  item: string;
  /** Under the scorer training used. */
  training: ScorePair;
  /** Under the second scorer. */
  second: ScorePair;
}

export interface GainFinding {
  item: string;
  note: string;
}

export interface GainCheck {
  verdict: Verdict;
  summary: string;
  findings: GainFinding[];
}

const gain = (pairs: ScorePair[]) => pairs.reduce((sum, p) => sum + p.candidate - p.current, 0);
const signed = (x: number) => `${x >= 0 ? '+' : ''}${Number(x.toFixed(3))}`;

/**
 * The decided items' gain under the training scorer against the second scorer's: a flag when
 * less than `minKept` of a positive training gain remains. The evidence is each item whose gain
 * the second scorer does not see.
 */
export function secondScorerCheck(items: readonly RescoredItem[], minKept: number, scorer: string): GainCheck {
  const trained = gain(items.map((i) => i.training));
  const second = gain(items.map((i) => i.second));
  const n = `${items.length} item${items.length === 1 ? '' : 's'} whose score changed`;
  if (items.length === 0 || trained <= 0) return { verdict: 'pass', summary: `no gain to check on ${n}`, findings: [] };
  const kept = second / trained;
  const findings = items
    .filter((i) => i.training.candidate - i.training.current > i.second.candidate - i.second.current)
    .map((i) => ({
      item: i.item,
      note: `gain ${signed(i.training.candidate - i.training.current)} under training's scorer, ${signed(i.second.candidate - i.second.current)} under the ${scorer}`,
    }));
  const figures = `${signed(trained)} under training's scorer, ${signed(second)} under the ${scorer} on ${n}`;
  return kept < minKept
    ? { verdict: 'flag', summary: `the gain mostly vanishes under a second scorer: ${figures}`, findings }
    : { verdict: 'pass', summary: `the gain holds under a second scorer: ${figures}`, findings: [] };
}

export interface ProbedItem {
  item: string;
  form: ProbeForm;
  original: ScorePair;
  variant: ScorePair;
}

/**
 * How much more the candidate loses on the variant than the skill it came from does. A variant
 * the old skill did better on than its original is no loss of the candidate's.
 */
export const widening = (p: ProbedItem) =>
  p.original.candidate - p.variant.candidate - Math.max(0, p.original.current - p.variant.current);

/**
 * Brittle: averaged item by item (an item recast in several forms counts once), the candidate
 * widens the gap between an item and its variants by more than `margin`, on at least two items.
 * One item alone may have been right by luck on its original form.
 */
export function probeCheck(probed: readonly ProbedItem[], margin: number): GainCheck {
  const wider = probed.filter((p) => widening(p) > 0);
  const byItem = new Map<string, number[]>();
  for (const p of probed) byItem.set(p.item, [...(byItem.get(p.item) ?? []), widening(p)]);
  const items = [...byItem.values()].map((ws) => ws.reduce((a, b) => a + b, 0) / ws.length);
  const n = `${byItem.size} recast item${byItem.size === 1 ? '' : 's'}`;
  const forms = [...new Set(probed.map((p) => p.form))].join(', ');
  if (probed.length === 0) return { verdict: 'pass', summary: 'no item to recast', findings: [] };
  const findings = wider.map((p) => ({
    item: p.item,
    note: `${p.form}: the candidate scores ${signed(p.original.candidate)} on the item and ${signed(p.variant.candidate)} recast, the skill it came from ${signed(p.original.current)} and ${signed(p.variant.current)}`,
  }));
  const lost = items.filter((w) => w > 0).length;
  if (byItem.size < 2) return { verdict: 'pass', summary: `too few recast items to tell (${n}, ${forms})`, findings };
  const mean = items.reduce((a, b) => a + b, 0) / items.length;
  const figures = `${lost} of ${n} lose more recast under the candidate (mean ${signed(mean)}, margin ${margin}; ${forms})`;
  return mean > margin && lost >= 2
    ? { verdict: 'flag', summary: `the gain does not survive a change of form: ${figures}`, findings }
    : { verdict: 'pass', summary: `the gain survives a change of form: ${figures}`, findings };
}
