/**
 * The training loop. Like a small GPT's train.py: set up, measure the baseline, then for each
 * epoch plan the batches and run the steps (rollout, reflect, aggregate, select, update,
 * evaluate), then the epoch boundary (slow update, meta skill); finally evaluate on the test
 * split. Each stage is one call into its module.
 */
import { madeFor } from '../model/attribution.ts';
import { RunStop } from '../model/types.ts';
import { injectEmptyAppendix } from '../skill/regions.ts';
import { withSkill } from '../skill/package/package.ts';
import { writeSkillFile } from '../run/skill-files.ts';
import { scoredSkill } from './stages/gate.ts';
import { epochSteps } from './batches.ts';
import { persistState } from './checkpoint.ts';
import { readResumeState, restoreStepBuffer } from './resume.ts';
import type { RunContext, TrainState } from './context.ts';
import { epochBoundary } from './epoch/boundary.ts';
import { activeMetaSkill } from './epoch/meta-skill.ts';
import { finalEvaluation } from './final-evaluation.ts';
import { buildScheduler } from './lr-schedulers.ts';
import { pipelinedSteps } from './pipeline/pipeline.ts';
import { type StepRunner, trainStep } from './step/train-step.ts';
import { poolParent, startPool } from './candidate-pool/pool-steps.ts';
import { budgetStop } from './budget-limits.ts';
import { INITIAL_ORIGIN } from '../run/origins.ts';

export type TrainOutcome =
  | {
      status: 'finished';
      summary: Record<string, unknown> /** It had finished before this call. */;
      alreadyFinished?: boolean;
    }
  | {
      status: 'stopped';
      cause: RunStop['reason'];
      /** Why, in words. */
      reason: string;
      /** The budget limit that was reached. */
      limit?: RunStop['limit'];
      /** The command that resumes the run (none when nothing was saved). */
      resumeCommand?: string;
    };

/** Where training starts: a resumed run's state, or the initial skill scored on the selection split. */
async function startState(ctx: RunContext): Promise<TrainState> {
  const { settings, plan } = ctx;
  const scheduler = buildScheduler(settings.lr.scheduler, settings.lr.max, settings.lr.min, plan.totalSteps);
  const resumed = await readResumeState(ctx);
  if (resumed) {
    scheduler.load(resumed.scheduler);
    ctx.clock.resumedAfter(resumed.elapsed);
    ctx.events.info(
      `[resume] from step ${resumed.lastStep + 1}  current=${resumed.current.score.toFixed(4)} best=${resumed.best.score.toFixed(4)} (origin=${resumed.best.origin})`,
    );
    return { ...resumed, scheduler, stepBuffer: [] };
  }
  writeSkillFile(ctx.dir, ctx.dir.skill(0), ctx.skillInit);
  ctx.events.emit({
    type: 'stage_started',
    step: 0,
    epoch: 0,
    stage: 'baseline',
    detail: `initial skill on selection items=${ctx.selection.items.length}`,
  });
  const started = performance.now();
  const base = await (ctx.baselineSelection ?? ctx.selection).score(ctx.skillInit, {
    dir: ctx.dir.path('selection_eval_baseline'),
    step: 0,
  });
  ctx.events.emit({
    type: 'stage_finished',
    step: 0,
    epoch: 0,
    stage: 'baseline',
    seconds: (performance.now() - started) / 1000,
    detail: `selection hard=${base.hard!.toFixed(4)} soft=${base.soft!.toFixed(4)}, gate score (${settings.gate.scoring.metric})=${base.gate.toFixed(4)}`,
    stats: { hard: base.hard!, soft: base.soft!, gate_metric: settings.gate.scoring.metric, gate: base.gate },
  });
  const skill = settings.skillAware.on
    ? withSkill(ctx.skillInit, injectEmptyAppendix(ctx.skillInit.skill))
    : ctx.skillInit;
  const current = scoredSkill(skill, base.gate, INITIAL_ORIGIN);
  const state: TrainState = {
    lastStep: 0,
    baselineScore: base.gate,
    current,
    best: { ...current, step: 0 },
    scheduler,
    boundariesDone: 0,
    stepBuffer: [],
    history: [],
    ...(settings.pool.size
      ? { pool: startPool(settings.pool.size, { ...current, values: base.itemValues }, base) }
      : {}),
  };
  persistState(ctx, state);
  return state;
}

/**
 * A stop asked for (Ctrl-C) or a budget limit reached, checked between steps: the state is saved
 * (after a step still finishing its gate is committed).
 */
async function stopHere(ctx: RunContext, state: TrainState, steps: StepRunner): Promise<TrainOutcome | undefined> {
  const stop = ctx.stop?.aborted
    ? undefined
    : budgetStop(ctx.settings.budget, ctx.ledger.totals(), ctx.clock.elapsedSeconds() / 60);
  if (!ctx.stop?.aborted && !stop) return undefined;
  await steps.settle();
  persistState(ctx, state, 'stopped');
  if (ctx.stop?.aborted)
    return {
      status: 'stopped',
      cause: 'interrupted',
      reason: `interrupted after step ${state.lastStep}; the run is saved`,
    };
  return { status: 'stopped', cause: 'budget', reason: stop!.message, limit: stop!.limit };
}

/**
 * Within a step or a boundary, when a limit or Ctrl-C stopped the calls: once those in flight are
 * done and recorded, the last saved state (the last complete step) is marked stopped; the resume
 * replays the calls made since from the journal.
 */
async function stopInStage(ctx: RunContext, stop: RunStop): Promise<TrainOutcome> {
  await ctx.admission.idle();
  const runtime = ctx.dir.readRuntimeState();
  if (runtime) ctx.dir.writeJson(ctx.dir.runtimeState, { ...runtime, status: 'stopped' });
  const resumesAt = runtime ? `after step ${runtime.last_completed_step}` : 'from the start';
  const reason =
    stop.reason === 'interrupted'
      ? `interrupted: the calls that finished are saved, those still out after the grace are made again on resume; the run resumes ${resumesAt}, replaying the saved ones`
      : stop.message;
  return { status: 'stopped', cause: stop.reason, reason, limit: stop.limit };
}

export async function train(ctx: RunContext): Promise<TrainOutcome> {
  try {
    return await trainLoop(ctx);
  } catch (err) {
    if (err instanceof RunStop) return stopInStage(ctx, err);
    throw err;
  }
}

/** Steps one after another, each committed before the next starts. */
const sequentialSteps = (ctx: RunContext, state: TrainState): StepRunner => ({
  run: (plan) => trainStep(ctx, state, plan),
  settle: async () => {},
});

async function trainLoop(ctx: RunContext): Promise<TrainOutcome> {
  const { settings, plan } = ctx;
  const state = await madeFor('baseline', () => startState(ctx));
  // With the gate overlap or the early accept, steps overlap (see `pipeline/`); they decide the same.
  const steps = pipelinedSteps(ctx, state) ?? sequentialSteps(ctx, state);
  for (let epoch = 1; epoch <= settings.epochs; epoch++) {
    const batches = epochSteps(ctx.train, epoch, settings, plan);
    const metaSkill = activeMetaSkill(ctx, epoch);
    state.stepBuffer = restoreStepBuffer(ctx, state.history, epoch);
    for (let s = 0; s < plan.stepsPerEpoch; s++) {
      const step = (epoch - 1) * plan.stepsPerEpoch + s + 1;
      if (step <= state.lastStep) continue;
      const stop = await stopHere(ctx, state, steps);
      if (stop) return stop;
      ctx.events.info(`[STEP ${step}/${plan.totalSteps}] epoch=${epoch} ${'='.repeat(30)}`);
      const pool = state.pool ? await madeFor('pool', () => poolParent(ctx, state, step)) : undefined;
      await steps.run({
        epoch,
        step,
        stepInEpoch: s,
        batches: batches[s]!,
        metaSkill,
        parent: pool?.parent,
        poolDropped: pool?.dropped,
      });
    }
    await steps.settle();
    if (state.boundariesDone < epoch) {
      const stop = await stopHere(ctx, state, steps);
      if (stop) return stop;
      await madeFor(`epoch ${epoch} boundary`, () => epochBoundary(ctx, state, epoch));
    }
  }

  const stop = await stopHere(ctx, state, steps);
  if (stop) return stop;
  return { status: 'finished', summary: await madeFor('final evaluation', () => finalEvaluation(ctx, state)) };
}
