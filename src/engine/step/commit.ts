/**
 * A step's commit: the one place where a step changes the trainer's state. The gate's decisions
 * go in through `applyDecision`, the memory entry into the step buffer, skill-aware notes into the
 * appendix, the record into the history; then everything is written, `runtime_state.json` last,
 * as the commit point a resume starts from.
 */
import type { Trajectory } from '../../envs/types.ts';
import type { UpdateItem } from '../../protocol/optimizer.ts';
import type { StepAction } from '../../run/records.ts';
import { persistState } from '../checkpoint.ts';
import type { TrainState } from '../context.ts';
import { round } from '../../util/round.ts';
import { flushAppendixNotes, maybeConsolidate } from '../optimizer-model/appendix.ts';
import { stepEntry } from '../optimizer-model/step-buffer.ts';
import { applyDecision } from '../stages/gate.ts';
import type { Gated, GateResult } from './evaluate-stage.ts';
import type { StepScope } from './step-scope.ts';

/** What a step decided, ready to be committed. */
export interface StepOutcome {
  action: StepAction;
  /** Execution-lapse notes for the appendix (skill-aware reflection). */
  notes: string[];
  /** What its memory entry is made of (none when it stopped before selecting). */
  memory?: { trajectories: Trajectory[]; findings: string[]; selected: UpdateItem[] };
  /** The gate's decision on its candidate (none for a skip). */
  gated?: Gated;
}

/** The step's entry in this epoch's memory; `result`: the gate's full evaluation (an accept's entry does not need it). */
export function memoryEntry(s: StepScope, outcome: StepOutcome, result?: GateResult) {
  const { memory } = outcome;
  if (!memory) return undefined;
  const complete = result?.outcome.sel.complete ?? true;
  return stepEntry({
    step: s.step,
    action: outcome.action,
    trajectories: memory.trajectories,
    findings: memory.findings,
    rejected: {
      items: memory.selected,
      scoreBefore: s.reference.score,
      scoreAfter: result?.score ?? Number.NaN,
      stoppedEarly: !complete,
    },
  });
}

/** Commits the step once its gate's evaluation is complete. */
export async function commitStep(s: StepScope, state: TrainState, outcome: StepOutcome): Promise<void> {
  const { ctx, step, epoch } = s;
  const result = await outcome.gated?.result;
  // The entry compares with the skill the step started from: made before the decisions change it.
  const entry = outcome.gated && memoryEntry(s, outcome, result);
  for (const { candidate, decision } of result?.taken ?? []) applyDecision(state, candidate, decision, step);
  if (result?.pool) state.pool = result.pool.pool;
  if (entry) {
    state.stepBuffer.push(entry);
    s.files.write('trajectory_digest.json', entry);
  }
  const { skillAware } = ctx.settings;
  if (skillAware.on) {
    s.record.appendix(flushAppendixNotes(ctx, state, outcome.notes, s.files.root));
    s.record.appendix(await maybeConsolidate(ctx.opt, skillAware.consolidateThreshold, state));
  }
  if (state.pool)
    s.record.pool({
      parent: s.reference.origin,
      members: state.pool.members.map((m) => m.origin),
      dropped: [...(s.plan.poolDropped ?? []), ...(result?.pool?.dropped ?? [])],
      ...(result?.pool?.merge ? { merge: result.pool.merge } : {}),
    });
  const record = s.record.build(outcome.action, state, ctx.ledger.forStep(step));
  // Wall-clock figures go to the step record only, so that history.json is reproducible.
  const wall = s.stages.wallTime();
  s.files.write('step_record.json', { ...record, timing: s.stages.timing, wall_time_s: round(wall, 1) });
  state.history.push(record);
  state.lastStep = step;
  persistState(ctx, state);
  ctx.events.emit({
    type: 'step_finished',
    step,
    epoch,
    action: outcome.action,
    current_score: state.current.score,
    best_score: state.best.score,
    seconds: round(wall, 3),
    timing: s.stages.timing,
  });
}
