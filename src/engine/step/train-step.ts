/**
 * One optimisation step: the six stages of the original, in order, then one commit.
 *   1 ROLLOUT    the target runs a batch of training items under the current skill
 *   2 REFLECT    analysts turn failures (and successes) into patches, minibatch by minibatch
 *   3 AGGREGATE  patches are merged hierarchically
 *   4 SELECT     the learning rate caps how many changes are kept; the optimizer ranks them
 *   5 UPDATE     the kept changes make a candidate skill
 *   6 EVALUATE   the gate accepts the candidate only if it beats the current skill on selection
 * Reflection starts while rollouts are still running, and merging while analysts still are.
 * The stages change no state: the commit takes in what they decided.
 */
import { madeFor, stepWork } from '../../model/attribution.ts';
import type { TrainState } from '../context.ts';
import { commitStep, type StepOutcome } from './commit.ts';
import { evaluateStage } from './evaluate-stage.ts';
import { aggregateStage, reflectStage } from './reflect-stage.ts';
import { rolloutStage } from './rollout-stage.ts';
import { selectStage } from './select-stage.ts';
import { type StepContext, type StepPlan, StepScope } from './step-scope.ts';
import { updateStage } from './update-stage.ts';

/** The six stages, as a step calls them: a speed-up around the step (`pipeline/`) may wrap them. */
export interface StepStages {
  rollout: typeof rolloutStage;
  reflect: typeof reflectStage;
  aggregate: typeof aggregateStage;
  select: typeof selectStage;
  update: typeof updateStage;
  evaluate: typeof evaluateStage;
}

export const STAGES: StepStages = {
  rollout: rolloutStage,
  reflect: reflectStage,
  aggregate: aggregateStage,
  select: selectStage,
  update: updateStage,
  evaluate: evaluateStage,
};

/** The six stages of step `s`: what it decided, for its commit. */
export async function decideStep(s: StepScope, stages: StepStages = STAGES): Promise<StepOutcome> {
  const rolled = await stages.rollout(s); //                     ① (② starts as minibatches fill)
  const reflected = await stages.reflect(s, rolled); //          ② (③ starts as patches come back)
  const merged = await stages.aggregate(s, reflected); //        ③
  const notes = reflected.notes;
  if (merged.items.length === 0) return { action: 'skip_no_patches', notes };
  const selected = await stages.select(s, merged, rolled); //    ④
  const updated = await stages.update(s, selected); //           ⑤
  if ('skip' in updated) return { action: updated.skip, notes };
  const gated = await stages.evaluate(s, updated); //            ⑥
  const findings = reflected.analysts.flatMap((r) => r.findings);
  const memory = { trajectories: rolled.trajectories, findings, selected };
  return { action: gated.auditRejected ? 'reject_audit' : gated.decision.action, notes, memory, gated };
}

/** Runs the steps of a run; `settle` waits for a step still finishing (one that overlaps the next). */
export interface StepRunner {
  run(plan: StepPlan): Promise<void>;
  settle(): Promise<void>;
}

/**
 * A step, from the trainer's state as the last commit left it, committed before it returns. Its
 * model calls are recorded as made for it (`madeFor`): its record counts them.
 */
export function trainStep(ctx: StepContext, state: TrainState, plan: StepPlan): Promise<void> {
  return madeFor(stepWork(plan.step), async () => {
    const s = new StepScope(ctx, state, plan);
    await commitStep(s, state, await decideStep(s));
  });
}
