/** What the stages of one step share: the step's plan, skill, memory, files, record and stage events. */
import type { Batch } from '../batches.ts';
import type { RunContext, TrainState } from '../context.ts';
import type { SkillState } from '../stages/gate.ts';
import { optimizerMemory } from '../optimizer/step-buffer.ts';
import type { StepBufferEntry } from '../../protocol/optimizer.ts';
import { StageReporter } from './stage-reporter.ts';
import { StepFiles } from './step-files.ts';
import { StepRecordBuilder, type PoolMerge } from './step-record.ts';
import type { Edit } from '../../skill/edits.ts';

export interface NextStep {
  batches: Batch[];
  /** In this epoch (its reflection can start ahead: same memory and meta skill). */
  sameEpoch: boolean;
  /** The skill it starts from, given the skill this step keeps (an epoch boundary may change it). */
  skill: (kept: string) => string;
}

export interface StepPlan {
  epoch: number;
  step: number;
  stepInEpoch: number;
  batches: Batch[];
  /** The next step, when what it starts from can be guessed: the next of this epoch, or the first of the next one. */
  next?: NextStep;
  metaSkill: string;
  /** The skill the step improves (a pool member); default: the current skill. */
  parent?: SkillState;
  /** The pool members dropped before the step (for a skill the slow update made). */
  poolDropped?: string[];
}

/** The parts of the run a step uses. */
export type StepContext = Pick<
  RunContext,
  | 'settings'
  | 'dir'
  | 'events'
  | 'ledger'
  | 'admission'
  | 'rollouts'
  | 'selection'
  | 'opt'
  | 'analystLimit'
  | 'env'
  | 'clock'
  | 'callsAhead'
>;

export class StepScope {
  readonly step: number;
  readonly epoch: number;
  /** The skill the step starts from and the gate compares with: the current skill, or a pool member. */
  readonly reference: SkillState;
  readonly skill: string;
  /** This epoch's earlier steps, as the analysts, the autonomous learning rate and the rewrite read them. */
  readonly memory: { entries: StepBufferEntry[]; text: string };
  readonly stages: StageReporter;
  readonly files: StepFiles;
  readonly record: StepRecordBuilder;
  /** The ledger's position at the start: what the step paid is counted from here. */
  readonly ledgerMark: number;
  /** The edits of the update that applied (patch mode): what a pool merge can carry over. */
  appliedEdits?: Edit[];
  /** What the step did with the candidate pool, for its record. */
  pool?: { parent: string; dropped: string[]; merge?: PoolMerge };

  constructor(
    readonly ctx: StepContext,
    state: TrainState,
    readonly plan: StepPlan,
  ) {
    this.step = plan.step;
    this.epoch = plan.epoch;
    this.reference = plan.parent ?? state.current;
    if (plan.parent) this.pool = { parent: plan.parent.origin, dropped: plan.poolDropped ?? [] };
    this.skill = this.reference.skill;
    this.memory = optimizerMemory(state.stepBuffer);
    this.stages = new StageReporter(ctx.events, () => ctx.admission.check(), plan.step, plan.epoch);
    this.files = new StepFiles(ctx.dir, plan.step, plan.batches.length);
    this.record = new StepRecordBuilder({ step: plan.step, epoch: plan.epoch, step_in_epoch: plan.stepInEpoch });
    this.ledgerMark = ctx.ledger.mark();
  }
}
