/** What the stages of one step share: the step's plan, skill, memory, files, record and stage events. */
import type { Batch } from '../batches.ts';
import type { RunContext, TrainState } from '../context.ts';
import { renderStepBuffer } from '../optimizer/step-buffer.ts';
import type { StepBufferEntry } from '../../protocol/optimizer.ts';
import { StageReporter } from './stage-reporter.ts';
import { StepFiles } from './step-files.ts';
import { StepRecordBuilder } from './step-record.ts';

export interface StepPlan {
  epoch: number;
  step: number;
  stepInEpoch: number;
  batches: Batch[];
  /** The next step's batches when it follows in this epoch (no epoch boundary between). */
  next?: Batch[];
  metaSkill: string;
}

/** The parts of the run a step uses. */
export type StepContext = Pick<RunContext, 'settings' | 'dir' | 'events' | 'ledger' | 'admission' | 'rollouts' | 'selection' | 'opt' | 'analystLimit' | 'env' | 'clock'>;

export class StepScope {
  readonly step: number;
  readonly epoch: number;
  /** The current skill the step starts from. */
  readonly skill: string;
  /** This epoch's earlier steps, as the analysts, the autonomous learning rate and the rewrite read them. */
  readonly memory: { entries: StepBufferEntry[]; text: string };
  readonly stages: StageReporter;
  readonly files: StepFiles;
  readonly record: StepRecordBuilder;
  /** The ledger's position at the start: what the step paid is counted from here. */
  readonly ledgerMark: number;

  constructor(
    readonly ctx: StepContext,
    state: TrainState,
    readonly plan: StepPlan,
  ) {
    this.step = plan.step;
    this.epoch = plan.epoch;
    this.skill = state.current.skill;
    this.memory = { entries: state.stepBuffer, text: renderStepBuffer(state.stepBuffer) };
    this.stages = new StageReporter(ctx.events, () => ctx.admission.check(), plan.step, plan.epoch);
    this.files = new StepFiles(ctx.dir, plan.step, plan.batches.length);
    this.record = new StepRecordBuilder({ step: plan.step, epoch: plan.epoch, step_in_epoch: plan.stepInEpoch });
    this.ledgerMark = ctx.ledger.mark();
  }
}
