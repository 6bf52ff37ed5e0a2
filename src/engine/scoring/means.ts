/** Scores of a set of rollouts, and their projection onto the gate's metric. */
import type { Price } from '../../config/schema.ts';
import type { Trajectory } from '../../envs/types.ts';
import { costOf } from '../../model/prices.ts';
import { stripProtectedRegions } from '../../skill/regions.ts';

export type GateMetric = 'hard' | 'soft' | 'mixed';

export interface MeanScore {
  hard: number;
  soft: number;
  /** Items scored (infrastructure errors are left out). */
  n: number;
  errors: number;
}

/** Means of hard and soft over the scored rollouts; errors are counted, not scored. */
export function computeScore(trajectories: Pick<Trajectory, 'hard' | 'soft' | 'error'>[]): MeanScore {
  let hard = 0;
  let soft = 0;
  let n = 0;
  let errors = 0;
  for (const t of trajectories) {
    if (t.error) {
      errors++;
      continue;
    }
    hard += t.hard;
    soft += t.soft;
    n++;
  }
  return n === 0 ? { hard: 0, soft: 0, n, errors } : { hard: hard / n, soft: soft / n, n, errors };
}

/** One item's contribution on the gate metric, in [0, 1]. */
export function itemMetric(hard: number, soft: number, metric: GateMetric, mixedWeight: number): number {
  if (metric === 'hard') return hard;
  if (metric === 'soft') return soft;
  const w = Math.min(1, Math.max(0, mixedWeight));
  return (1 - w) * hard + w * soft;
}

export const DEFAULT_LEADING_WORDS = [
  'MUST',
  'ALWAYS',
  'NEVER',
  'ONLY',
  'CRITICAL',
  'IMPORTANT',
  'RESOLVE',
  'PREFER',
  'ENSURE',
  'STRICT',
  'VERIFY',
];

/** Share of "leading words" among the words of the skill body (protected regions excluded). */
export function semanticDensity(skill: string, leadingWords: string[] = DEFAULT_LEADING_WORDS): number {
  if (!skill.trim()) return 0;
  const tokens =
    stripProtectedRegions(skill)
      .toLowerCase()
      .match(/[a-z0-9]+/g) ?? [];
  if (tokens.length === 0) return 0;
  const words = new Set(leadingWords.map((w) => w.trim().toLowerCase()).filter(Boolean));
  return tokens.filter((t) => words.has(t)).length / tokens.length;
}

export interface GateScoring {
  metric: GateMetric;
  mixedWeight: number;
  density?: { weight: number; words?: string[] };
  /** Cost per task weighed against the score (`evaluation.cost_weight`): the objective is score − weight × cost. */
  cost?: CostObjective;
}

export interface CostObjective {
  weight: number;
  /** `ktokens`: thousands of tokens a task (input and output); `usd`: dollars a task at `price`. */
  unit: 'ktokens' | 'usd';
  price?: Price;
}

type Scored = Pick<Trajectory, 'hard' | 'soft' | 'error' | 'usage'>;

/** What one task cost in the objective's unit; a rollout without usage (an old record) costs 0. */
function taskCostIn(t: Scored, cost: CostObjective): number {
  if (!t.usage) return 0;
  if (cost.unit === 'ktokens') return (t.usage.input + t.usage.output) / 1000;
  return costOf(t.usage, cost.price) ?? 0;
}

/**
 * What the objective takes off a skill's score for what its tasks cost: the weight times the mean
 * cost of a scored rollout. Never negative, so a score without it is an upper bound of the
 * objective (what an early-stopping gate relies on).
 */
export function costPenalty(trajectories: readonly Scored[], scoring: GateScoring): number {
  const cost = scoring.cost;
  if (!cost || cost.weight === 0) return 0;
  const scored = trajectories.filter((t) => !t.error);
  if (scored.length === 0) return 0;
  return (cost.weight * scored.reduce((a, t) => a + taskCostIn(t, cost), 0)) / scored.length;
}

/** The constant the gate adds to a skill's score (the optional semantic-density bonus). */
export function gateBonus(skill: string, scoring: GateScoring): number {
  return scoring.density ? scoring.density.weight * semanticDensity(skill, scoring.density.words) : 0;
}

/**
 * The gate score of a skill: the mean of its items' metric plus the bonus, less the cost penalty.
 * Every gate score is computed by this one function, so that a candidate and the current skill
 * compare exactly.
 */
export function gateScore(trajectories: Scored[], skill: string, scoring: GateScoring): number {
  let sum = 0;
  let n = 0;
  for (const t of trajectories) {
    if (t.error) continue;
    sum += itemMetric(t.hard, t.soft, scoring.metric, scoring.mixedWeight);
    n++;
  }
  return (n === 0 ? 0 : sum / n) + gateBonus(skill, scoring) - costPenalty(trajectories, scoring);
}
