/**
 * How well a skill fires: precision, recall and F1 of its loading over activation rollouts, each
 * rollout (a query's sample) one trial, with the confusion counts and, per query, the share of
 * its samples that loaded the skill. skill-creator counts a query as passed when that share is
 * at least one half for a should-trigger query (under one half for a should-not one): that is
 * `passed` here. Where queries carry answers, `task` is the share of their rollouts that gave the
 * answer and `joint` the share that loaded the skill and gave it (activation × task success).
 */
import { round } from '../../util/round.ts';
import type { Trajectory } from '../types.ts';

export interface ActivationMetrics {
  /** Rollouts counted (infrastructure errors left out). */
  n: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  /** Of the rollouts that loaded the skill, those that should have (1 when none loaded). */
  precision: number;
  /** Of the rollouts that should have loaded it, those that did (1 when none should). */
  recall: number;
  f1: number;
  /** Queries whose load rate is on the right side of one half, of `queries`. */
  passed: number;
  queries: number;
  /** Per query id: how many samples loaded the skill, of how many, and whether it should. */
  by_query: Record<string, { loaded: number; of: number; should: boolean }>;
  /** Of the rollouts whose task was scored, their mean task score (absent when none was). */
  task?: number;
  /** Of those rollouts, the mean of loaded-as-it-should × task score: the objective. */
  joint?: number;
}

const ratio = (a: number, b: number) => (b === 0 ? 1 : a / b);

/** The metrics of the activation rollouts among `trajectories`; undefined when there are none. */
export function activationMetrics(trajectories: readonly Trajectory[]): ActivationMetrics | undefined {
  const counted = trajectories.filter((t) => t.activation && !t.error);
  if (counted.length === 0) return undefined;
  const m = { tp: 0, fp: 0, fn: 0, tn: 0 };
  const byQuery: ActivationMetrics['by_query'] = {};
  for (const t of counted) {
    const { should, loaded } = t.activation!;
    if (should && loaded) m.tp++;
    else if (!should && loaded) m.fp++;
    else if (should) m.fn++;
    else m.tn++;
    const q = (byQuery[t.id] ??= { loaded: 0, of: 0, should });
    q.of++;
    if (loaded) q.loaded++;
  }
  const precision = ratio(m.tp, m.tp + m.fp);
  const recall = ratio(m.tp, m.tp + m.fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  const queries = Object.values(byQuery);
  const passed = queries.filter((q) => q.loaded / q.of >= 0.5 === q.should).length;
  const scored = counted.filter((t) => t.activation!.task !== undefined);
  const mean = (xs: number[]) => round(xs.reduce((a, b) => a + b, 0) / xs.length, 6);
  return {
    n: counted.length,
    ...m,
    precision: round(precision, 6),
    recall: round(recall, 6),
    f1: round(f1, 6),
    passed,
    queries: queries.length,
    by_query: byQuery,
    ...(scored.length
      ? {
          task: mean(scored.map((t) => t.activation!.task!)),
          joint: mean(scored.map((t) => (t.activation!.loaded === t.activation!.should ? t.activation!.task! : 0))),
        }
      : {}),
  };
}

/** The metrics without the per-query table: what a step record keeps. */
export function activationScore(m: ActivationMetrics) {
  return {
    precision: m.precision,
    recall: m.recall,
    f1: m.f1,
    n: m.n,
    passed: m.passed,
    queries: m.queries,
    ...(m.task !== undefined ? { task: m.task, joint: m.joint } : {}),
  };
}

/** The queries whose load rate is on the wrong side of one half. */
export function failingQueries(m: ActivationMetrics): string[] {
  return Object.entries(m.by_query)
    .filter(([, q]) => q.loaded / q.of >= 0.5 !== q.should)
    .map(([id]) => id)
    .sort();
}

/** The queries measured in both that pass in `after` and failed in `before` (`fixed`), and the other way (`broke`). */
export function flippedQueries(
  before: ActivationMetrics,
  after: ActivationMetrics,
): { fixed: string[]; broke: string[] } {
  const wrong = (m: ActivationMetrics) => new Set(failingQueries(m));
  const was = wrong(before);
  const is = wrong(after);
  const both = Object.keys(after.by_query)
    .filter((id) => id in before.by_query)
    .sort();
  return {
    fixed: both.filter((id) => was.has(id) && !is.has(id)),
    broke: both.filter((id) => !was.has(id) && is.has(id)),
  };
}

/** One line: "precision 0.75, recall 0.6, F1 0.667 (9 of 12 queries pass)". */
export function activationLine(m: ActivationMetrics): string {
  const task = m.task !== undefined ? `; task ${+m.task.toFixed(3)}, activation × task ${+m.joint!.toFixed(3)}` : '';
  return `precision ${m.precision}, recall ${m.recall}, F1 ${+m.f1.toFixed(3)} (${m.passed} of ${m.queries} queries pass)${task}`;
}
