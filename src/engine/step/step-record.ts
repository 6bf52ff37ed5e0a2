/**
 * The step record builder: each stage reports what it did, in its own typed part; `build`
 * gives the record of `history.json` with its fields in the order the original writes them.
 */
import type { LrDecision, StageUsage, StepAction, StepRecord } from '../../run/records.ts';
import type { LrControl } from '../settings.ts';
import type { GateMetric } from '../scoring/means.ts';
import type { SkillStates } from '../stages/gate.ts';
import { countTokens } from '../../skill/document.ts';

type Part<K extends keyof StepRecord> = Pick<StepRecord, K>;

export type RolloutPart = Part<
  | 'rollout_hard'
  | 'rollout_soft'
  | 'rollout_n'
  | 'rollout_errors'
  | 'accumulation_batches'
  | 'n_patches'
  | 'n_failure_patches'
  | 'n_success_patches'
  | 'package_usage'
  | 'step_target'
  | 'activation_train'
>;

export interface SelectPart {
  n_edits_merged: number;
  n_edits_ranked: number;
  edit_budget: number | null;
  lr_control_mode: LrControl;
  lr_decision?: LrDecision;
  support_counts: (number | null)[];
}

export type UpdatePart = Part<
  | 'candidate_hash'
  | 'candidate_skill_len'
  | 'candidate_skill_tokens'
  | 'rewrite_change_summary'
  | 'edit_apply_summary'
  | 'package_checks'
  | 'audit'
  | 'description_change'
>;

export interface GatePart {
  selection_hard: number | null;
  selection_soft: number | null;
  gate_metric: GateMetric;
  candidate_gate_score: number | null;
  candidate_gate_upper_bound?: number;
  gate: NonNullable<StepRecord['gate']>;
  activation_val?: StepRecord['activation_val'];
}

export type PoolPart = NonNullable<StepRecord['pool']>;
export type PoolMerge = NonNullable<PoolPart['merge']>;

export type AppendixPart = Part<
  'n_execution_lapse_notes' | 'n_appendix_notes_added' | 'n_appendix_notes_total' | 'n_appendix_notes_consolidated'
>;

export class StepRecordBuilder {
  private rolloutPart?: RolloutPart;
  private selectPart?: SelectPart;
  private skipReason?: string;
  private updatePart?: UpdatePart;
  private gatePart?: GatePart;
  private appendixPart: AppendixPart = {};
  private poolPart?: PoolPart;

  constructor(private readonly position: Part<'step' | 'epoch' | 'step_in_epoch'>) {}

  rollout(part: RolloutPart): void {
    this.rolloutPart = part;
  }

  select(part: SelectPart): void {
    this.selectPart = part;
  }

  /** The update gave no candidate. */
  skipped(reason: string): void {
    this.skipReason = reason;
  }

  update(part: UpdatePart): void {
    this.updatePart = part;
  }

  /** The audit's record, when the audit of an accepted gain added to the lint's. */
  audit(record: NonNullable<UpdatePart['audit']>): void {
    this.updatePart = { ...this.updatePart, audit: record };
  }

  gate(part: GatePart): void {
    this.gatePart = part;
  }

  pool(part: PoolPart): void {
    this.poolPart = part;
  }

  appendix(part: AppendixPart): void {
    this.appendixPart = { ...this.appendixPart, ...part };
  }

  /** The record, once the step's action is known and the trainer's state is final. */
  build(action: StepAction, states: SkillStates, tokens: Record<string, StageUsage>): StepRecord {
    const r = this.rolloutPart;
    if (!r) throw new Error(`step ${this.position.step}: a record needs the rollout stage`);
    const { selectPart: s, updatePart: u, gatePart: g } = this;
    // Written field by field: the order is the file's (undefined fields are left out of it).
    return {
      step: this.position.step,
      epoch: this.position.epoch,
      step_in_epoch: this.position.step_in_epoch,
      tokens,
      rollout_hard: r.rollout_hard,
      rollout_soft: r.rollout_soft,
      rollout_n: r.rollout_n,
      rollout_errors: r.rollout_errors,
      accumulation_batches: r.accumulation_batches,
      n_patches: r.n_patches,
      n_failure_patches: r.n_failure_patches,
      n_success_patches: r.n_success_patches,
      package_usage: r.package_usage,
      step_target: r.step_target,
      activation_train: r.activation_train,
      action,
      n_edits_merged: s?.n_edits_merged,
      n_edits_ranked: s?.n_edits_ranked,
      edit_budget: s?.edit_budget,
      lr_control_mode: s?.lr_control_mode,
      lr_decision: s?.lr_decision,
      support_counts: s?.support_counts,
      skip_reason: this.skipReason,
      candidate_hash: u?.candidate_hash,
      candidate_skill_len: u?.candidate_skill_len,
      candidate_skill_tokens: u?.candidate_skill_tokens,
      rewrite_change_summary: u?.rewrite_change_summary,
      edit_apply_summary: u?.edit_apply_summary,
      package_checks: u?.package_checks,
      audit: u?.audit,
      description_change: u?.description_change,
      selection_hard: g?.selection_hard,
      selection_soft: g?.selection_soft,
      gate_metric: g?.gate_metric,
      candidate_gate_score: g?.candidate_gate_score,
      candidate_gate_upper_bound: g?.candidate_gate_upper_bound,
      gate: g?.gate,
      activation_val: g?.activation_val,
      pool: this.poolPart,
      // In the order the notes were counted: a consolidation after them updates their total in place.
      ...this.appendixPart,
      current_score: states.current.score,
      best_score: states.best.score,
      best_step: states.best.step,
      current_origin: states.current.origin,
      best_origin: states.best.origin,
      skill_len: states.current.skill.length,
      skill_tokens: countTokens(states.current.skill),
    };
  }
}
