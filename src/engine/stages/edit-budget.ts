/**
 * How many changes a step may apply: its edit budget, the learning rate. Every change counts
 * as one, whatever it does: a text edit of any file of the package, a file created or deleted.
 * A policy gives each step's budget: the scheduler's (`lr_control_mode: fixed`, and `none`
 * outside the full-rewrite mode, as the original), or the optimizer's own choice from the step's
 * evidence (`lr_control_mode: autonomous`). The full-rewrite mode has no budget.
 */
import type { LrDecision } from '../../run/records.ts';
import type { UpdateItem } from '../../protocol/optimizer.ts';
import type { LrScheduler } from '../lr-schedulers.ts';
import type { OptimizerContext } from '../optimizer-model/ask.ts';
import type { LrControl, StepTarget } from '../settings.ts';
import { decideLearningRate } from './select.ts';

/** What the optimizer sees when it chooses the budget. */
export interface BudgetEvidence {
  skill: string;
  items: UpdateItem[];
  rolloutHard: number;
  rolloutSoft: number;
  rolloutN: number;
  stepBufferText: string;
  metaSkill: string;
}

export interface EditBudget {
  next(evidence: BudgetEvidence): Promise<{ budget: number; decision?: LrDecision }>;
  /** The budget `next` will give, when it is known before the step's changes are (a schedule's). */
  known(): number | undefined;
}

export class ScheduledBudget implements EditBudget {
  constructor(private readonly scheduler: LrScheduler) {}

  async next(): Promise<{ budget: number }> {
    return { budget: this.scheduler.step() };
  }

  known(): number {
    return this.scheduler.peek();
  }
}

export class OptimizerChosenBudget implements EditBudget {
  constructor(private readonly opt: OptimizerContext) {}

  known(): undefined {
    return undefined;
  }

  async next(evidence: BudgetEvidence): Promise<{ budget: number; decision: LrDecision }> {
    const decision = await decideLearningRate(this.opt, evidence);
    return { budget: decision.learning_rate, decision };
  }
}

/** A description step's budget: `optimizer.description_edits`, apart from the learning rate's schedule. */
export class FixedBudget implements EditBudget {
  constructor(private readonly edits: number) {}

  async next(): Promise<{ budget: number }> {
    return { budget: this.edits };
  }

  known(): number {
    return this.edits;
  }
}

/**
 * The budget of a step: a description step's own (the schedule does not move), else the policy
 * of the run's settings, or undefined when the mode has no budget (full rewrite).
 */
export function editBudget(
  control: LrControl,
  scheduler: LrScheduler,
  opt: OptimizerContext,
  target: { target: StepTarget; descriptionEdits: number } = { target: 'body', descriptionEdits: 1 },
): EditBudget | undefined {
  if (target.target === 'description') return new FixedBudget(target.descriptionEdits);
  if (opt.mode === 'full_rewrite_minibatch') return undefined;
  return control === 'autonomous' ? new OptimizerChosenBudget(opt) : new ScheduledBudget(scheduler);
}
