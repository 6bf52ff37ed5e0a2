/**
 * Runs that would pay and learn nothing, said before they pay: a selection split on which the
 * initial skill already scores the most there is (no candidate can pass the gate, so every step
 * is paid for and rejected), and, for a dry run, a `budget.max_usd` that could not hold because a
 * model's price is unknown (train refuses to start so).
 */
import type { Config } from '../config/schema.ts';
import type { Item } from '../envs/types.ts';
import { unpricedBudget } from '../engine/budget-limits.ts';
import { itemMetric } from '../engine/scoring/means.ts';
import type { TrainSettings } from '../engine/settings.ts';
import type { Rollouts } from '../engine/stages/rollout.ts';
import type { Role } from '../model/types.ts';
import { packageHash, type SkillPackage } from '../skill/package/package.ts';
import { count } from '../util/plural.ts';
import type { Plan } from './plan.ts';

/**
 * After the baseline: the warning when the initial skill scores the gate metric's maximum on
 * every selection item (from the score cache, which holds the baseline's rollouts), where the
 * gate can only accept a candidate that scores more. A gate with a bonus a candidate could add
 * (semantic density), a preference for shorter skills at equal scores, or a cost weighed against
 * the score (a cheaper skill at the same score) can still accept one.
 */
export function baselineAtCeiling(
  settings: TrainSettings,
  rollouts: Rollouts,
  items: readonly Item[],
  skill: SkillPackage,
): string | undefined {
  const { gate } = settings;
  if (!gate.on || gate.scoring.density || gate.scoring.cost || gate.shorterWithin !== undefined || items.length === 0)
    return undefined;
  const hash = packageHash(skill);
  for (const item of items) {
    for (let sample = 0; sample < gate.repeats; sample++) {
      const t = rollouts.cached(hash, item, sample);
      if (!t || t.error || itemMetric(t.hard, t.soft, gate.scoring.metric, gate.scoring.mixedWeight) < 1)
        return undefined;
    }
  }
  return `the initial skill already scores 1.0000 on the ${count(items.length, 'selection item')} (evaluation.gate_metric ${gate.scoring.metric}): no candidate can beat it, so the gate will reject every step and the run pays for steps that cannot change the skill. Add selection items it fails (the val split), or stop now with Ctrl-C`;
}

/** For a dry run: what train would say of `budget.max_usd` with a model of unknown price. */
export function unpricedBudgetNote(config: Config, plan: Pick<Plan, 'prices'>): string | undefined {
  const unpriced = (['target', 'optimizer'] as Role[])
    .filter((role) => !plan.prices[role as 'target'].price)
    .map((role) => [role, plan.prices[role as 'target'].model] as [Role, string]);
  const { error, warning } = unpricedBudget(config.budget, unpriced);
  return error ? `${error} (train refuses to start like this)` : warning;
}
