/**
 * Longitudinal comparison at an epoch boundary: the same training items under the previous and
 * the current epoch's skill, paired and put in four categories (reference §13.5, §13.6).
 */
import type { Item, Trajectory } from '../../envs/types.ts';
import type { ComparisonPair, PairCategory, PairSide } from '../../protocol/optimizer.ts';
import type { PairPolicy } from '../settings.ts';
import { isFailure } from '../optimizer-model/step-buffer.ts';
import { renderConversation } from '../optimizer-model/trajectory-text.ts';

const show = (v: unknown) => (v === undefined || v === null ? 'N/A' : typeof v === 'string' ? v : JSON.stringify(v));

function side(t: Trajectory): PairSide {
  return {
    hard: isFailure(t) ? 0 : 1,
    soft: t.soft,
    predicted_answer: show(t.predicted),
    fail_reason: t.failReason ?? '',
  };
}

export function category(prevPass: boolean, currPass: boolean): PairCategory {
  if (!prevPass && currPass) return 'improved';
  if (prevPass && !currPass) return 'regressed';
  return prevPass ? 'stable_success' : 'persistent_fail';
}

/** Pairs in item order; items where either side hit an infrastructure error are left out. */
export function buildPairs(
  items: Item[],
  prev: (Trajectory | undefined)[],
  curr: (Trajectory | undefined)[],
): ComparisonPair[] {
  const pairs: ComparisonPair[] = [];
  items.forEach((item, i) => {
    const p = prev[i];
    const c = curr[i];
    if (!p || !c || p.error || c.error) return;
    pairs.push({
      id: item.id,
      task: c.task ?? String(item.question ?? item.id),
      category: category(!isFailure(p), !isFailure(c)),
      expected: show(c.expected),
      prev: side(p),
      curr: side(c),
      prev_trajectory: renderConversation(p.conversation) || '(empty trajectory)',
      curr_trajectory: renderConversation(c.conversation) || '(empty trajectory)',
    });
  });
  return pairs;
}

export function keepByPolicy(pairs: ComparisonPair[], policy: PairPolicy): ComparisonPair[] {
  if (policy === 'changed') return pairs.filter((p) => p.category === 'improved' || p.category === 'regressed');
  if (policy === 'unchanged')
    return pairs.filter((p) => p.category === 'persistent_fail' || p.category === 'stable_success');
  return pairs;
}

/** Pairs as saved to disk: without the trajectories. */
export function slimPairs(pairs: ComparisonPair[]): Omit<ComparisonPair, 'prev_trajectory' | 'curr_trajectory'>[] {
  return pairs.map(({ prev_trajectory: _p, curr_trajectory: _c, ...rest }) => rest);
}

export function countCategories(pairs: ComparisonPair[]): Record<PairCategory, number> {
  const counts: Record<PairCategory, number> = { improved: 0, regressed: 0, persistent_fail: 0, stable_success: 0 };
  for (const p of pairs) counts[p.category]++;
  return counts;
}

const SECTIONS: [PairCategory, string][] = [
  ['regressed', 'Regressions (right before, wrong now): highest priority'],
  ['persistent_fail', 'Persistent failures (wrong both times)'],
  ['improved', 'Improvements (wrong before, right now)'],
  ['stable_success', 'Stable successes (right both times)'],
];

export function comparisonText(pairs: ComparisonPair[]): string {
  const c = countCategories(pairs);
  const out = [
    `### Summary\n${pairs.length} tasks: ${c.improved} improved, ${c.regressed} regressed, ${c.persistent_fail} still failing, ${c.stable_success} still right.`,
  ];
  for (const [cat, title] of SECTIONS) {
    const these = pairs.filter((p) => p.category === cat);
    const blocks = these.map((p) => {
      const lines = [
        `#### Task ${p.id}: ${p.task}`,
        `Expected: ${p.expected}`,
        `Previous: ${p.prev.hard ? 'PASS' : 'FAIL'} soft=${p.prev.soft.toFixed(2)} answer=${p.prev.predicted_answer}`,
        `Current:  ${p.curr.hard ? 'PASS' : 'FAIL'} soft=${p.curr.soft.toFixed(2)} answer=${p.curr.predicted_answer}`,
      ];
      if (p.curr.fail_reason) lines.push(`Current fail reason: ${p.curr.fail_reason}`);
      if (!p.prev.hard && p.prev.fail_reason) lines.push(`Previous fail reason: ${p.prev.fail_reason}`);
      if (cat !== 'stable_success') {
        lines.push('Previous trajectory:', '```', p.prev_trajectory ?? '(trajectory not available)', '```');
        lines.push('Current trajectory:', '```', p.curr_trajectory ?? '(trajectory not available)', '```');
      }
      return lines.join('\n');
    });
    out.push(`### ${title}\n${blocks.length ? blocks.join('\n\n') : '(none)'}`);
  }
  return out.join('\n\n');
}
