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
import { isAccepted, type StageUsage, type StepAction } from '../../run/records.ts';
import { mergeStage } from '../pool/pool-steps.ts';
import { persistState } from '../checkpoint.ts';
import { round, type TrainState } from '../context.ts';
import { flushAppendixNotes, maybeConsolidate } from '../optimizer/appendix.ts';
import { editBudget } from '../stages/edit-budget.ts';
import { GateOverlap } from './gate-overlap.ts';
import { StepScope, type StepContext, type StepPlan } from './step-scope.ts';
import {
  aggregateStage,
  evaluateStage,
  reflectStage,
  rolloutStage,
  selectStage,
  startReflection,
  updateStage,
} from './step-stages.ts';

export type { StepPlan } from './step-scope.ts';

/**
 * A step whose gate accepted early (`evaluation.gate_early_accept`): its decision is in the
 * state, so the next step can start from it; `resume` lets the rest of its selection items start
 * (called once the next step's rollouts are queued, so that they go first); `done` resolves once
 * its record and state are committed.
 */
export interface PendingStep {
  action: StepAction;
  resume(): void;
  done: Promise<void>;
  /** The ledger's position when the next step started: this step's record counts the calls before it. */
  until?: number;
}

/**
 * Whether the gate may hand an accept on early: the exact gate, nothing after the gate that
 * changes the kept skill, and no budget limit (whose checks between and within steps would then
 * see the calls at other moments).
 */
function acceptsEarly(ctx: StepContext, state: TrainState): boolean {
  const { gate, skillAware, budget } = ctx.settings;
  const limited = budget.max_calls > 0 || budget.max_tokens > 0 || budget.max_usd > 0 || budget.max_minutes > 0;
  return gate.on && gate.kind === 'exact' && gate.earlyAccept && !state.pool && !skillAware.on && !limited;
}

/** Runs a step; after an early accept it returns before the step is committed (see `PendingStep`). `previous`: the step before, when it accepted early. */
export async function trainStep(
  ctx: StepContext,
  state: TrainState,
  plan: StepPlan,
  previous?: PendingStep,
): Promise<PendingStep | undefined> {
  const s = new StepScope(ctx, state, plan);
  if (previous) previous.until = s.ledgerMark;
  try {
    return await runStep(s, state, previous);
  } catch (err) {
    // The previous step is committed before the error goes on, so that a resume starts after it.
    previous?.resume();
    await previous?.done.catch(() => {});
    throw err;
  }
}

async function runStep(
  s: StepScope,
  state: TrainState,
  previous: PendingStep | undefined,
): Promise<PendingStep | undefined> {
  const { ctx, plan } = s;
  const budget = editBudget(ctx.settings.lr.control, state.scheduler, ctx.opt);
  const reflection = startReflection(s);
  // With evaluation.gate_overlap, the next step's rollouts run ahead under the skill the gate is guessed to keep.
  const decided = previous ? [...state.history, { action: previous.action }] : state.history;
  const ahead = ctx.settings.gate.overlap && plan.next ? new GateOverlap(s, decided, plan.next, state) : undefined;
  const rolling = rolloutStage(s, reflection); //                            ① (② starts as minibatches fill)
  previous?.resume(); // the previous step's last selection items queue behind these rollouts
  const rolled = await rolling;
  ahead?.rolloutsDone();
  const reflected = await reflectStage(s, reflection, rolled, budget?.known()); // ② (③ starts as groups finish)
  const merged = await aggregateStage(s, reflected); //                     ③
  reportCallsAhead(s);
  // From here on the previous step's full score (the gate's bar), record and scheduler state are needed.
  await previous?.done;
  let action: StepAction = 'skip_no_patches';
  let rest: Promise<void> | undefined;
  let release = () => {};
  const resume = acceptsEarly(ctx, state) ? new Promise<void>((r) => (release = r)) : undefined;
  if (merged.items.length > 0) {
    const selected = await selectStage(s, budget, merged, rolled); //          ④
    const candidate = await updateStage(s, selected); //                    ⑤
    if (candidate === undefined) action = 'skip_no_rewrite';
    else {
      ahead?.candidateMade({
        candidate,
        trajectories: rolled.trajectories,
        findings: reflected.analysts.flatMap((r) => r.findings),
        selected,
      });
      ({ action, rest } = await evaluateStage(s, state, candidate, selected, rolled, reflected, {
        onGateQueued: () => ahead?.gateQueued(candidate),
        resume,
      })); // ⑥
    }
    if (state.pool && s.ctx.settings.pool.merge && isAccepted(action)) await mergeStage(s, state); //  (a pool's merge)
  }
  if (rest) {
    const pending: PendingStep = { action, resume: release, done: Promise.resolve() };
    pending.done = rest.then(async () => {
      await commit(s, state, action, reflected.notes, pending.until);
      ahead?.settle();
    });
    pending.done.catch(() => {}); // awaited by the next step or the trainer
    return pending;
  }
  await commit(s, state, action, reflected.notes);
  ahead?.settle();
  return undefined;
}

/** The step has made its analyst and merge calls: what the previous step's reflection ahead made for it, and how much it took. */
function reportCallsAhead(s: StepScope): void {
  const tally = s.ctx.callsAhead?.finish();
  if (tally && tally.made > 0)
    s.ctx.events.emit({
      type: 'reflect_ahead',
      step: s.step,
      epoch: s.epoch,
      calls: tally.made,
      taken: tally.taken,
      wasted: tally.made - tally.taken,
    });
}

/**
 * The step's record and the trainer's state, written once: `runtime_state.json` last, as the
 * commit point. `until`: the ledger's position where the next step began, when it began first.
 */
async function commit(
  s: StepScope,
  state: TrainState,
  action: StepAction,
  notes: string[],
  until?: number,
): Promise<void> {
  const { ctx, step, epoch } = s;
  const { skillAware } = ctx.settings;
  if (skillAware.on) {
    s.record.appendix(flushAppendixNotes(ctx, state, notes, s.files.root));
    s.record.appendix(await maybeConsolidate(ctx.opt, skillAware.consolidateThreshold, state));
  }
  if (state.pool)
    s.record.pool({
      parent: s.reference.origin,
      members: state.pool.members.map((m) => m.origin),
      dropped: s.pool?.dropped ?? [],
      ...(s.pool?.merge ? { merge: s.pool.merge } : {}),
    });
  const tokens =
    until === undefined
      ? ctx.ledger.byPurpose(s.ledgerMark)
      : usageBetween(ctx.ledger.byPurpose(s.ledgerMark), ctx.ledger.byPurpose(until));
  const record = s.record.build(action, state, tokens);
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
    action,
    current_score: state.current.score,
    best_score: state.best.score,
    seconds: round(wall, 3),
    timing: s.stages.timing,
  });
}

/** Usage per purpose of the calls in `all` and not in `later` (the calls since a later position). */
function usageBetween(all: Record<string, StageUsage>, later: Record<string, StageUsage>): Record<string, StageUsage> {
  const out: Record<string, StageUsage> = {};
  const minus = (a: number | undefined, b: number | undefined) => (a === undefined ? undefined : a - (b ?? 0));
  for (const [purpose, a] of Object.entries(all)) {
    const b = later[purpose];
    if (!b) {
      out[purpose] = a;
      continue;
    }
    if (a.calls === b.calls) continue;
    out[purpose] = {
      calls: a.calls - b.calls,
      prompt_tokens: a.prompt_tokens - b.prompt_tokens,
      completion_tokens: a.completion_tokens - b.completion_tokens,
      cached_tokens: minus(a.cached_tokens, b.cached_tokens),
      reasoning_tokens: minus(a.reasoning_tokens, b.reasoning_tokens),
      total_tokens: minus(a.total_tokens, b.total_tokens),
      cost_usd:
        a.cost_usd === null || a.cost_usd === undefined || b.cost_usd === null
          ? a.cost_usd
          : round(a.cost_usd - (b.cost_usd ?? 0), 10),
    };
  }
  return out;
}
