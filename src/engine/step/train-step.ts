/**
 * One optimisation step: the six stages of the original, in order.
 *   1 ROLLOUT    the target runs a batch of training items under the current skill
 *   2 REFLECT    analysts turn failures (and successes) into patches, minibatch by minibatch
 *   3 AGGREGATE  patches are merged hierarchically
 *   4 SELECT     the learning rate caps how many changes are kept; the optimizer ranks them
 *   5 UPDATE     the kept changes make a candidate skill
 *   6 EVALUATE   the gate accepts the candidate only if it beats the current skill on selection
 * Reflection starts while rollouts are still running, and merging while analysts still are.
 * The step ends with one commit of the trainer's state, whatever it did.
 */
import type { StepAction } from '../../run/records.ts';
import { persistState } from '../checkpoint.ts';
import { round, type TrainState } from '../context.ts';
import { flushAppendixNotes, maybeConsolidate } from '../optimizer/appendix.ts';
import { editBudget } from '../stages/edit-budget.ts';
import { GateOverlap } from './gate-overlap.ts';
import { StepScope, type StepContext, type StepPlan } from './step-scope.ts';
import { aggregateStage, evaluateStage, reflectStage, rolloutStage, selectStage, startReflection, updateStage } from './step-stages.ts';

export type { StepPlan } from './step-scope.ts';

export async function trainStep(ctx: StepContext, state: TrainState, plan: StepPlan): Promise<void> {
  const s = new StepScope(ctx, state, plan);
  const budget = editBudget(ctx.settings.lr.control, state.scheduler, ctx.opt);
  const reflection = startReflection(s);
  // With evaluation.gate_overlap, the next step's rollouts run ahead under the skill the gate is guessed to keep.
  const ahead = ctx.settings.gate.overlap && plan.next ? new GateOverlap(s, state.history, plan.next) : undefined;
  const rolled = await rolloutStage(s, reflection); //                       ① (② starts as minibatches fill)
  ahead?.rolloutsDone();
  const reflected = await reflectStage(s, reflection, rolled, budget?.known()); // ② (③ starts as groups finish)
  const merged = await aggregateStage(s, reflected); //                     ③
  let action: StepAction = 'skip_no_patches';
  if (merged.items.length > 0) {
    const selected = await selectStage(s, budget, merged, rolled); //          ④
    const candidate = await updateStage(s, selected); //                    ⑤
    action = candidate === undefined ? 'skip_no_rewrite' : await evaluateStage(s, state, candidate, selected, rolled, reflected, () => ahead?.gateQueued(candidate)); // ⑥
  }
  await commit(s, state, action, reflected.notes);
  ahead?.settle(state.current.skill);
}

/** The step's record and the trainer's state, written once: `runtime_state.json` last, as the commit point. */
async function commit(s: StepScope, state: TrainState, action: StepAction, notes: string[]): Promise<void> {
  const { ctx, step, epoch } = s;
  const { skillAware } = ctx.settings;
  if (skillAware.on) {
    s.record.appendix(flushAppendixNotes(ctx, state, notes, s.files.root));
    s.record.appendix(await maybeConsolidate(ctx.opt, skillAware.consolidateThreshold, state));
  }
  const record = s.record.build(action, state, ctx.ledger.byPurpose(s.ledgerMark));
  // Wall-clock figures go to the step record only, so that history.json is reproducible.
  const wall = s.stages.wallTime();
  s.files.write('step_record.json', { ...record, timing: s.stages.timing, wall_time_s: round(wall, 1) });
  state.history.push(record);
  state.lastStep = step;
  persistState(ctx, state);
  ctx.events.emit({ type: 'step_finished', step, epoch, action, current_score: state.current.score, best_score: state.best.score, seconds: round(wall, 3), timing: s.stages.timing });
}
