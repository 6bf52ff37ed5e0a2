/**
 * An evaluation's numbers: each item's score over its repeats, a cell's means with their 95%
 * intervals, and paired tests rounded as `eval_summary.json` holds them.
 */
import type { Item, Trajectory } from '../../envs/types.ts';
import { meanInterval, type Interval, type PairedTest } from '../../util/stats.ts';
import type { CellStats } from './summary.ts';

export const round = (x: number) => Math.round(x * 1e6) / 1e6;
const pair = (i: Interval | undefined): [number, number] | undefined => (i ? [round(i.low), round(i.high)] : undefined);

export function stats(items: { hard: number; soft: number }[]): CellStats {
  const n = items.length;
  if (n === 0) return { n, hard: 0, soft: 0 };
  const hardValues = items.map((i) => i.hard);
  const softValues = items.map((i) => i.soft);
  const hi = meanInterval(hardValues);
  const si = meanInterval(softValues);
  return {
    n,
    hard: round(hardValues.reduce((a, b) => a + b, 0) / n),
    soft: round(softValues.reduce((a, b) => a + b, 0) / n),
    ...(hi ? { hard_ci95: pair(hi), ci_method: hi.method } : {}),
    ...(si ? { soft_ci95: pair(si) } : {}),
  };
}

export interface ItemScore {
  id: string;
  type: string;
  hard: number;
  soft: number;
}

/** Per item, the mean over its scored repeats; items with none are errors. */
export function perItem(items: Item[], runs: (Trajectory | undefined)[][]): { scores: ItemScore[]; errors: number } {
  const scores: ItemScore[] = [];
  let errors = 0;
  items.forEach((item, i) => {
    const ok = runs.map((r) => r[i]).filter((t): t is Trajectory => Boolean(t && !t.error));
    if (ok.length === 0) {
      errors++;
      return;
    }
    scores.push({
      id: item.id,
      type: ok[0]!.taskType ?? item.type ?? 'other',
      hard: ok.reduce((a, t) => a + t.hard, 0) / ok.length,
      soft: ok.reduce((a, t) => a + t.soft, 0) / ok.length,
    });
  });
  return { scores, errors };
}

export function roundTest(t: PairedTest): PairedTest {
  return {
    ...t,
    diff: round(t.diff),
    ...(t.ci ? { ci: [round(t.ci[0]), round(t.ci[1])] } : {}),
    p: t.p === null ? null : round(t.p),
  };
}
