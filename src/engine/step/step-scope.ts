/** What the stages of one step share: the step's plan, skill, memory, budget, files, record and stage events. */
import type { StepBufferEntry } from '../../protocol/optimizer.ts';
import type { Batch } from '../batches.ts';
import type { RunContext, TrainState } from '../context.ts';
import { optimizerMemory } from '../optimizer-model/step-buffer.ts';
import { type EditBudget, editBudget } from '../stages/edit-budget.ts';
import { type StepTarget, stepTarget } from '../settings.ts';
import type { SkillState } from '../stages/gate.ts';
import type { SkillPackage } from '../../skill/package/package.ts';
import { StageReporter } from './stage-reporter.ts';
import { StepFiles } from './step-files.ts';
import { StepRecordBuilder } from './step-record.ts';

export interface StepPlan {
  epoch: number;
  step: number;
  stepInEpoch: number;
  batches: Batch[];
  metaSkill: string;
  /** The skill the step improves (a pool member); default: the current skill. */
  parent?: SkillState;
  /** The pool members dropped before the step (for a skill the slow update made). */
  poolDropped?: string[];
}

/**
 * Where a step starts when the step before it has decided but not committed yet (it accepted
 * early and its gate is still scoring): the skill it kept and the memory entry it will write.
 * Without it, a step starts from the trainer's state as the last commit left it.
 */
export interface StepStart {
  skill: SkillPackage;
  entry: StepBufferEntry;
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
  | 'packageChecks'
  | 'audit'
  | 'stop'
>;

export class StepScope {
  readonly step: number;
  readonly epoch: number;
  /** The skill the step starts from: its rollouts run under it and its edits apply to it. */
  readonly package: SkillPackage;
  /** Its `SKILL.md` text, as the optimizer reads it. */
  readonly skill: string;
  /** This epoch's earlier steps, as the analysts, the autonomous learning rate and the rewrite read them. */
  readonly memory: { entries: StepBufferEntry[]; text: string };
  /** What the step edits: the body and files, or the description (`train.targets`). */
  readonly target: StepTarget;
  /** How many edits the step may keep (none in the full-rewrite mode). */
  readonly budget: EditBudget | undefined;
  readonly stages: StageReporter;
  readonly files: StepFiles;
  readonly record: StepRecordBuilder;

  constructor(
    readonly ctx: StepContext,
    /** The trainer's state: read by the stages, changed only by the step's commit. */
    readonly state: Readonly<TrainState>,
    readonly plan: StepPlan,
    start?: StepStart,
  ) {
    this.step = plan.step;
    this.epoch = plan.epoch;
    this.package = plan.parent ?? start?.skill ?? state.current;
    this.skill = this.package.skill;
    this.memory = optimizerMemory(start ? [...state.stepBuffer, start.entry] : state.stepBuffer);
    this.target = stepTarget(ctx.settings.targets, plan.step);
    this.budget = editBudget(ctx.settings.lr.control, state.scheduler, ctx.opt, {
      target: this.target,
      descriptionEdits: ctx.settings.descriptionEdits,
    });
    this.stages = new StageReporter(ctx.events, () => ctx.admission.check(), plan.step, plan.epoch);
    this.files = new StepFiles(ctx.dir, plan.step, plan.batches.length);
    this.record = new StepRecordBuilder({ step: plan.step, epoch: plan.epoch, step_in_epoch: plan.stepInEpoch });
  }

  /**
   * The skill the gate compares the candidate with: the current skill (as committed when the gate
   * runs), or the pool member the step improves.
   */
  get reference(): SkillState {
    return this.plan.parent ?? this.state.current;
  }
}
