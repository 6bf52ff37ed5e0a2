/**
 * What a training run's gain cost, and whether the skill pays for itself: the run's dollars and
 * wall time against the test points it gained, and what the best skill saves (or adds) at every
 * task against the initial one, so how many tasks it takes to earn the training back.
 */
import { round } from '../util/round.ts';
import type { GainCost, TaskCost } from '../run/records.ts';

export type { GainCost };

const money = (usd: number) => `$${usd < 0.01 ? usd.toFixed(5) : usd.toFixed(2)}`;

/** The report and its console line; undefined without a cost per task of both skills. */
export function gainWorth(
  costs: { initial?: TaskCost; best?: TaskCost },
  run: { usd: number | null; wallTimeS: number; gain: number | null },
): { report: GainCost; line: string } | undefined {
  const { initial, best } = costs;
  if (!initial || !best) return undefined;
  const gainPoints = run.gain === null ? null : round(run.gain * 100, 2);
  const report: GainCost = { usd: run.usd, wall_time_s: run.wallTimeS, gain_points: gainPoints };
  if (run.usd !== null && gainPoints !== null && gainPoints > 0) report.usd_per_point = round(run.usd / gainPoints, 6);
  if (initial.usd !== null && best.usd !== null) {
    const saving = round(initial.usd - best.usd, 8);
    report.saving_per_task_usd = saving;
    if (saving > 0 && run.usd !== null) report.payback_tasks = Math.ceil(run.usd / saving);
  }
  const perTask =
    initial.usd !== null && best.usd !== null
      ? `a test task costs ${money(initial.usd)} with the initial skill, ${money(best.usd)} with the best`
      : `a test task takes ${Math.round(initial.input)} input tokens with the initial skill, ${Math.round(best.input)} with the best`;
  const spent = run.usd === null ? 'training cost unknown (a price is missing)' : `training cost ${money(run.usd)}`;
  const gained = gainPoints === null ? '' : `, ${gainPoints >= 0 ? '+' : ''}${gainPoints} points on test`;
  const perPoint = report.usd_per_point !== undefined ? ` (${money(report.usd_per_point)} a point)` : '';
  const payback =
    report.payback_tasks !== undefined
      ? `; the saving pays the training back after ${report.payback_tasks.toLocaleString('en')} tasks`
      : '';
  return {
    report,
    line: `cost: ${perTask}; ${spent} in ${Math.round(run.wallTimeS)} s${gained}${perPoint}${payback}`,
  };
}
