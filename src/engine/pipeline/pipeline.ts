/**
 * Steps that overlap: the only code that runs work ahead of the step that needs it. It wraps the
 * step's stages and decides nothing: every step makes the decisions it would make alone, so the
 * trainer without this module is correct, only slower.
 *
 * - The gate overlap (`evaluation.gate_overlap`): while a step's gate runs, the next step's
 *   rollouts, analysts and merge run under the skill the gate is guessed to keep (`GateOverlap`),
 *   and the next step takes their results and answers (`CallsAhead`).
 * - The early accept (`evaluation.gate_early_accept`): once the exact gate's accept is certain,
 *   the next step starts from the candidate while the gate scores its last items; the step
 *   commits once they are in, before the next step selects (which needs the gate's bar and the
 *   learning-rate schedule as committed).
 */
import { madeFor, stepWork } from '../../model/attribution.ts';
import { epochSteps } from '../batches.ts';
import type { RunContext, TrainState } from '../context.ts';
import { skillAfterBoundary } from '../epoch/boundary.ts';
import { commitStep, memoryEntry, type StepOutcome } from '../step/commit.ts';
import type { Reflected } from '../step/reflect-stage.ts';
import type { Rolled } from '../step/rollout-stage.ts';
import { type StepPlan, StepScope, type StepStart } from '../step/step-scope.ts';
import { decideStep, STAGES, type StepRunner, type StepStages } from '../step/train-step.ts';
import { CallsAhead } from './calls-ahead.ts';
import { GateOverlap, type NextStep } from './gate-overlap.ts';

/** A step that accepted early: decided, with its commit still to come. */
interface Pending {
  action: StepOutcome['action'];
  /** Where the next step starts. */
  start: StepStart;
  /** Lets the rest of its selection items start (once the next step's rollouts are queued, so that they go first). */
  release: () => void;
  /** Resolves once it is committed. */
  committed: Promise<void>;
}

/** The run's steps through the pipeline, when the gate overlap or the early accept is on; undefined otherwise. */
export function pipelinedSteps(ctx: RunContext, state: TrainState): StepRunner | undefined {
  const { gate } = ctx.settings;
  return gate.overlap || gate.earlyAccept ? new Pipeline(ctx, state) : undefined;
}

class Pipeline implements StepRunner {
  private pending?: Pending;
  /** With the gate overlap: the optimizer calls made ahead, which the steps' own calls take. */
  private readonly calls?: CallsAhead;
  /** The run as the steps see it: their optimizer calls go through `calls`. */
  private readonly ctx: RunContext;

  constructor(
    run: RunContext,
    private readonly state: TrainState,
  ) {
    this.calls = run.settings.gate.overlap ? new CallsAhead(run.opt.optimizer) : undefined;
    this.ctx = this.calls ? { ...run, opt: { ...run.opt, optimizer: this.calls.model } } : run;
  }

  /** A step; its model calls, and those of work run ahead for it, are recorded as made for it. */
  run(plan: StepPlan): Promise<void> {
    return madeFor(stepWork(plan.step), () => this.step(plan));
  }

  private async step(plan: StepPlan): Promise<void> {
    const { ctx, state } = this;
    const previous = this.pending;
    this.pending = undefined;
    const s = new StepScope(ctx, state, plan, previous?.start);
    const next = ctx.settings.gate.overlap ? this.nextStep(plan) : undefined;
    const decided = previous ? [...state.history, { action: previous.action }] : state.history;
    const ahead = next && new GateOverlap(s, decided, next, state, this.calls);
    let release = () => {};
    const hold = this.acceptsEarly() ? new Promise<void>((r) => (release = r)) : undefined;
    let outcome: StepOutcome;
    try {
      outcome = await decideStep(s, this.stages(previous, ahead, hold));
      // A step that stopped before selecting commits after the step before it too.
      await previous?.committed;
    } catch (err) {
      // The previous step is committed before the error goes on, so that a resume starts after it.
      previous?.release();
      await previous?.committed.catch(() => {});
      throw err;
    }
    const commit = () => commitStep(s, state, outcome).then(() => ahead?.settle());
    const gated = outcome.gated;
    if (gated?.acceptedAfter === undefined) return commit();
    const pending: Pending = {
      action: outcome.action,
      start: { skill: gated.candidate, entry: memoryEntry(s, outcome)! },
      release,
      committed: Promise.resolve(),
    };
    // Committed once the gate's last items are in, while the next step runs.
    pending.committed = gated.result.then(commit);
    // Awaited by the next step or by `settle`.
    pending.committed.catch(() => {});
    this.pending = pending;
  }

  async settle(): Promise<void> {
    const pending = this.pending;
    this.pending = undefined;
    pending?.release();
    await pending?.committed;
  }

  /**
   * Whether the gate may hand an accept on early: the exact gate, nothing after the gate that
   * changes the kept skill, and no budget limit (whose checks between and within steps would then
   * see the calls at other moments).
   */
  private acceptsEarly(): boolean {
    const { gate, skillAware, budget } = this.ctx.settings;
    const limited = budget.max_calls > 0 || budget.max_tokens > 0 || budget.max_usd > 0 || budget.max_minutes > 0;
    return gate.on && gate.kind === 'exact' && gate.earlyAccept && !this.state.pool && !skillAware.on && !limited;
  }

  /** The step after `plan` when what it starts from can be guessed: the next of this epoch, or the first of the next one. */
  private nextStep(plan: StepPlan): NextStep | undefined {
    const { ctx } = this;
    const { settings } = ctx;
    if (plan.stepInEpoch + 1 < ctx.plan.stepsPerEpoch) {
      const batches = epochSteps(ctx.train, plan.epoch, settings, ctx.plan)[plan.stepInEpoch + 1]!;
      return { step: plan.step + 1, batches, sameEpoch: true, metaSkill: plan.metaSkill, skill: (kept) => kept };
    }
    const skill = skillAfterBoundary(settings, plan.epoch);
    if (plan.epoch >= settings.epochs || !skill) return undefined;
    const batches = epochSteps(ctx.train, plan.epoch + 1, settings, ctx.plan)[0]!;
    // The first boundary writes no optimizer notes (nothing to compare yet).
    const metaSkill = !settings.epoch.metaSkill || plan.epoch === 1 ? '' : undefined;
    return { step: plan.step + 1, batches, sameEpoch: false, metaSkill, skill };
  }

  /** The step's stages, with what runs ahead started at the moments it may. */
  private stages(previous: Pending | undefined, ahead: GateOverlap | undefined, hold?: Promise<void>): StepStages {
    let rolled: Rolled | undefined;
    let reflected: Reflected | undefined;
    return {
      ...STAGES,
      rollout: (step) => {
        const rolling = STAGES.rollout(step);
        // The previous step's last selection items queue behind these rollouts.
        previous?.release();
        return rolling.then((r) => {
          rolled = r;
          ahead?.rolloutsDone();
          return r;
        });
      },
      reflect: async (step, r) => (reflected = await STAGES.reflect(step, r)),
      aggregate: async (step, r) => {
        const merged = await STAGES.aggregate(step, r);
        this.reportCallsAhead(step);
        // From here on the previous step's full score (the gate's bar), record and schedule are needed.
        await previous?.committed;
        return merged;
      },
      update: async (step, selected) => {
        const updated = await STAGES.update(step, selected);
        if ('candidate' in updated)
          ahead?.candidateMade({
            candidate: updated.candidate,
            trajectories: rolled!.trajectories,
            findings: reflected!.analysts.flatMap((r) => r.findings),
            selected,
          });
        return updated;
      },
      evaluate: (step, candidate) =>
        STAGES.evaluate(step, candidate, { onQueued: () => ahead?.gateQueued(candidate.candidate), hold }),
    };
  }

  /** The step has made its analyst and merge calls: what the previous step's reflection ahead made for it, and how much it took. */
  private reportCallsAhead(s: StepScope): void {
    const tally = this.calls?.finish();
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
}
