/**
 * A step record as the run page's charts and tables take it: the fields they draw, what the step
 * decided, and the wall-clock times from the event log (our history.json leaves them out to stay
 * reproducible).
 */
import type { HistoryRecord } from '../../run/records.ts';
import { decisionOf, type Decision } from './decision.ts';

/** The fields of a step record the dashboard draws. */
export type StepRow = { candidate_gate_upper_bound?: number; decision: Decision } & Pick<
  HistoryRecord,
  | 'step'
  | 'epoch'
  | 'action'
  | 'rollout_hard'
  | 'rollout_soft'
  | 'rollout_n'
  | 'rollout_errors'
  | 'selection_hard'
  | 'selection_soft'
  | 'candidate_gate_score'
  | 'gate_metric'
  | 'current_score'
  | 'best_score'
  | 'best_step'
  | 'edit_budget'
  | 'timing'
  | 'tokens'
  | 'gate'
  | 'edit_apply_summary'
  | 'n_edits_merged'
  | 'n_edits_ranked'
  | 'skill_len'
  | 'wall_time_s'
>;
const ROW_KEYS: (keyof StepRow & string)[] = [
  'step',
  'epoch',
  'action',
  'rollout_hard',
  'rollout_soft',
  'rollout_n',
  'rollout_errors',
  'selection_hard',
  'selection_soft',
  'candidate_gate_score',
  'candidate_gate_upper_bound',
  'gate_metric',
  'current_score',
  'best_score',
  'best_step',
  'edit_budget',
  'timing',
  'tokens',
  'gate',
  'edit_apply_summary',
  'n_edits_merged',
  'n_edits_ranked',
  'skill_len',
  'wall_time_s',
];

export function stepRow(r: HistoryRecord, times?: { timing?: Record<string, number>; seconds?: number }): StepRow {
  const row: Record<string, unknown> = {};
  for (const k of ROW_KEYS) if (r[k] !== undefined) row[k] = r[k];
  row.decision = decisionOf(r.action);
  if (times) {
    row.timing ??= times.timing;
    row.wall_time_s ??= times.seconds;
  }
  return row as StepRow;
}
