/** What `skillopt eval` writes to `eval_summary.json`: per (skill, target) cell, and paired comparisons. */
import type { TaskCost } from '../../engine/task-cost.ts';
import type { ActivationMetrics } from '../../envs/triggers/metrics.ts';
import type { Interval, PairedTest } from '../../util/stats.ts';

export interface CellStats {
  n: number;
  hard: number;
  soft: number;
  hard_ci95?: [number, number];
  soft_ci95?: [number, number];
  ci_method?: Interval['method'];
}

export interface Cell extends CellStats {
  /** Shown from the seal of another run's test figure (not scored again): which run, and when. */
  sealed?: { by: string; at: string };
  skill: string;
  skill_label: string;
  skill_hash: string;
  target: string;
  n_items: number;
  /** Items with no scored repeat (infrastructure failures), left out of the means. */
  errors: number;
  /** Mean hard score of each repeat. */
  repeat_hard: number[];
  by_type: Record<string, CellStats>;
  rollout_dirs: string[];
  /** Activation rollouts (the `triggers` env): precision, recall and F1 of the skill's loading, over every repeat. */
  activation?: ActivationMetrics;
  /** What one task costs under this skill on this target: tokens, USD at its prices, agent turns, call latency. */
  per_task?: TaskCost;
}

export interface Comparison {
  target: string;
  baseline: string;
  candidate: string;
  hard: PairedTest;
  soft: PairedTest;
}

export interface EvalSummary {
  skill: string;
  split: string;
  n_items: number;
  hard: number;
  soft: number;
  target: string;
  repeats: number;
  items: number;
  cells: Cell[];
  comparisons: Comparison[];
  usage: Record<string, unknown>;
}
