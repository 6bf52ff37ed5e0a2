/**
 * The gate overlapped with the next step (`evaluation.gate_overlap`): the next step runs ahead
 * under the skill it will start from if the gate keeps the skill it is guessed to keep.
 *
 * - Its training rollouts, in the order its reflection consumes them. A guess of the current
 *   skill starts them as soon as this step's own rollouts are done (the target is idle while the
 *   optimizer reflects and merges); a guess of the candidate as soon as the candidate is made,
 *   ahead of the gate's rollouts: the next step's analysts wait on them, while the gate's
 *   decision only has to confirm the guess. They run through the score cache, so a next step that
 *   starts from that skill takes their results (finished or still running).
 * - Its reflection: its analysts and merge on those rollouts. In the same epoch, with this step's
 *   memory entry as the guessed decision will write it; in the next, with the empty memory an
 *   epoch starts with, so only the skill is guessed. Their calls go through `CallsAhead`, so
 *   the next step's identical calls take their answers; if the guessed memory was not the real
 *   one, the prompts differ and nothing is taken.
 * - The next step may be the next epoch's first, when the boundary's effect on the skill is known
 *   without a model call; its reflection runs ahead only when the meta skill it reads is known
 *   too. A guess of the candidate then waits behind the gate's rollouts (ahead of them it would
 *   delay the decision for little), and so does its reflection.
 *
 * So the next step decides exactly as it would have. A wrong guess starts no more of this work;
 * what was already run is wasted, and reported.
 */
import type { Trajectory } from '../../envs/types.ts';
import { madeFor, stepWork } from '../../model/attribution.ts';
import type { StepBufferEntry, UpdateItem } from '../../protocol/optimizer.ts';
import { isAccepted, isSkipped, type GateAction, type HistoryRecord } from '../../run/records.ts';
import { reflectionOrder } from '../batches.ts';
import { packageHash, type SkillPackage } from '../../skill/package/package.ts';
import type { TrainState } from '../context.ts';
import { optimizerMemory, optimizerView, stepEntry } from '../optimizer-model/step-buffer.ts';
import { editBudget } from '../stages/edit-budget.ts';
import { stepTarget } from '../settings.ts';
import type { StepScope } from '../step/step-scope.ts';
import { type Reflection, reflectors, startMerge } from '../step/reflection.ts';
import type { Batch } from '../batches.ts';
import type { CallsAhead } from './calls-ahead.ts';

/** The step after this one, as far as it is known before this step's gate decides. */
export interface NextStep {
  step: number;
  batches: Batch[];
  /** In this epoch: its memory is this epoch's, with this step's entry; else it starts empty. */
  sameEpoch: boolean;
  /** The optimizer notes it reads, when known before this step decides (else its reflection cannot run ahead). */
  metaSkill: string | undefined;
  /** The skill it starts from, given the skill this step keeps (an epoch boundary may change it). */
  skill: (kept: SkillPackage) => SkillPackage;
}

export type Guess = 'candidate' | 'current';

/**
 * The skill the gate is more likely to keep: with no gate the candidate; else what its last
 * decision kept (acceptances come in runs early on and grow rare as the skill settles), and the
 * candidate before any decision (a first candidate usually beats the initial skill).
 */
export function guessKept(history: Pick<HistoryRecord, 'action'>[], gateOn: boolean): Guess {
  if (!gateOn) return 'candidate';
  const last = history.findLast((r) => !isSkipped(r.action));
  return !last || isAccepted(last.action) ? 'candidate' : 'current';
}

/** What the step knows once its candidate is made: its memory entry but for the decision. */
export interface StepSoFar {
  candidate: SkillPackage;
  trajectories: Trajectory[];
  findings: string[];
  selected: UpdateItem[];
}

/** The decision a guess stands for: the candidate kept is an accept (a new best when the current skill is the best), the current one a reject. */
function guessedAction(guess: Guess, state: Pick<TrainState, 'current' | 'best'>, gateOn: boolean): GateAction {
  if (!gateOn) return 'force_accept';
  if (guess === 'current') return 'reject';
  return state.current.score >= state.best.score ? 'accept_new_best' : 'accept';
}

export class GateOverlap {
  readonly guess: Guess;
  private started?: { skill: SkillPackage; done: Promise<number> };
  private wrong = false;
  /** The next step's rollout results as they come, per batch, and the reflection ahead once it started. */
  private readonly results: (Trajectory | undefined)[][];
  private reflection?: Reflection[];
  /** The memory entry the reflection ahead assumed this step writes. */
  private guessedEntry?: StepBufferEntry;
  /** What this step knew once its candidate was made, for a reflection ahead that waits on its rollouts. */
  private soFar?: StepSoFar;

  constructor(
    private readonly s: StepScope,
    /** The decisions so far (a record's action is enough). */
    history: Pick<HistoryRecord, 'action'>[],
    private readonly next: NextStep,
    /** The trainer's state, for the memory and the skills the guess builds on. */
    private readonly state: TrainState,
    /** Where the reflection ahead sends its optimizer calls, for the next step to take their answers. */
    private readonly calls?: CallsAhead,
  ) {
    this.guess = guessKept(history, s.ctx.settings.gate.on);
    this.results = next.batches.map((b) => new Array<Trajectory | undefined>(b.items.length).fill(undefined));
  }

  /** This step's rollouts are done: a guess of the current skill runs ahead now. */
  rolloutsDone(): void {
    if (this.guess === 'current') this.start(this.s.package);
  }

  /**
   * The candidate is made (its gate not started): a guess of the candidate runs ahead now, before
   * the gate's rollouts, when the next step is in this epoch; the reflection ahead starts once
   * its rollouts have.
   */
  candidateMade(so: StepSoFar): void {
    this.soFar = so;
    if (this.guess === 'candidate' && this.next.sameEpoch) this.start(so.candidate);
    else if (this.started) this.reflectAhead(so);
  }

  /**
   * The gate's rollouts are queued: a guess of the candidate for the next epoch's first step runs
   * behind them. Its rollouts alone would gain little ahead of the gate, and delay the decision.
   */
  gateQueued(candidate: SkillPackage): void {
    if (this.guess === 'candidate') this.start(candidate);
  }

  /** Called once the step is committed: a wrong guess starts no more rollouts, and a wrong memory entry no more reflection. */
  settle(): void {
    const started = this.started;
    if (!started) return;
    const right = packageHash(this.next.skill(this.state.current)) === packageHash(started.skill);
    this.wrong = !right;
    const view = (e: StepBufferEntry | undefined) => JSON.stringify(e && optimizerView([e]));
    if (!right || (this.guessedEntry && view(this.state.stepBuffer.at(-1)) !== view(this.guessedEntry)))
      this.calls?.cancel();
    const { step, epoch, ctx } = this.s;
    void started.done.then((rollouts) =>
      ctx.events.emit({
        type: 'gate_overlap',
        step,
        epoch,
        guess: this.guess,
        right,
        rollouts,
        wasted: right ? 0 : rollouts,
      }),
    );
  }

  /** Runs the next step's rollouts under the skill it starts from if this step keeps `kept`; their calls are the next step's. */
  private start(kept: SkillPackage): void {
    if (this.started) return;
    madeFor(stepWork(this.next.step), () => this.startRollouts(kept));
    if (this.soFar) this.reflectAhead(this.soFar);
  }

  private startRollouts(kept: SkillPackage): void {
    const skill = this.next.skill(kept);
    const runs = this.next.batches.map((b, a) =>
      this.s.ctx.rollouts.run(skill, b.items, {
        seed: b.seed,
        training: true,
        order: reflectionOrder(b),
        stop: () => this.wrong,
        onResult: (t, i) => {
          this.results[a]![i] = t;
          this.reflection?.[a]?.reflector.add(i, t);
        },
      }),
    );
    // A failure here is the next step's to meet (it runs those rollouts again); nothing is lost.
    const done = Promise.all(runs).then(
      (rs) => rs.reduce((n, r) => n + r.ran, 0),
      () => 0,
    );
    this.started = { skill, done };
  }

  /**
   * The next step's analysts and merge, on its rollouts run ahead, with the memory the guessed
   * decision gives (see the file's comment). Not with a candidate pool or skill-aware
   * reflection, whose next skill is not the current one or the candidate as it is.
   */
  private reflectAhead(so: StepSoFar): void {
    madeFor(stepWork(this.next.step), () => this.startReflection(so));
  }

  private startReflection(so: StepSoFar): void {
    const { ctx } = this.s;
    const { skillAware, lr } = ctx.settings;
    const { calls, started, next } = this;
    const metaSkill = next.metaSkill;
    if (!calls || !started || this.reflection || metaSkill === undefined || this.state.pool || skillAware.on) return;
    const memory = next.sameEpoch ? this.guessedMemory(so) : optimizerMemory([]);
    if (!memory) return;
    // The budget the next step's merge ranks within, when known ahead (this step's is taken from the schedule already).
    const target = stepTarget(ctx.settings.targets, this.next.step);
    const budget = editBudget(lr.control, this.state.scheduler, ctx.opt, {
      target,
      descriptionEdits: ctx.settings.descriptionEdits,
    })?.known();
    calls.begin();
    const inputs = {
      opt: { ...ctx.opt, optimizer: calls.ahead, warn: () => {} },
      skill: started.skill.skill,
      ...(started.skill.files?.size ? { files: started.skill.files } : {}),
      metaSkill,
    };
    this.reflection = reflectors(ctx, { ...inputs, memory, batches: next.batches, target });
    for (const [a, { reflector }] of this.reflection.entries())
      for (const [i, t] of this.results[a]!.entries()) if (t) reflector.add(i, t);
    const merged = started.done.then(() =>
      startMerge(
        ctx,
        inputs,
        this.reflection!.map(({ reflector }) => reflector.close()),
        budget,
      ),
    );
    // Work on a guess: its failures are the next step's to meet, with its own calls.
    merged.catch(() => {});
  }

  /** This epoch's memory with the entry the guessed decision writes; undefined when that entry is not known yet. */
  private guessedMemory(so: StepSoFar): ReturnType<typeof optimizerMemory> | undefined {
    const { ctx, step } = this.s;
    const { gate } = ctx.settings;
    const action = guessedAction(this.guess, this.state, gate.on);
    // A reject's entry holds its score, known only at the end, unless the gate stops early (then the optimizer is not shown it).
    if (action === 'reject' && !gate.earlyStop) return undefined;
    const entry = stepEntry({
      step,
      action,
      trajectories: so.trajectories,
      findings: so.findings,
      rejected: { items: so.selected, scoreBefore: this.s.reference.score, scoreAfter: Number.NaN, stoppedEarly: true },
    });
    this.guessedEntry = entry;
    return optimizerMemory([...this.state.stepBuffer, entry]);
  }
}
