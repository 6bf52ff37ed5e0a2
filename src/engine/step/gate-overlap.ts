/**
 * The gate overlapped with the next step (`evaluation.gate_overlap`): the next step's training
 * rollouts start, in the order its reflection consumes them, under the skill the gate is guessed
 * to keep. A guess of the current skill starts them as soon as this step's own rollouts are done
 * (the target is idle while the optimizer reflects and merges); a guess of the candidate starts
 * them behind the gate's rollouts. They run through the score cache, so a next step that starts
 * from that skill takes their results (finished or still running) instead of running them again,
 * and decides exactly as it would have. A wrong guess starts no more of them; those already run
 * are wasted, and reported.
 */
import { isAccepted, isSkipped, type HistoryRecord } from '../../run/records.ts';
import { reflectionOrder, type Batch } from '../batches.ts';
import { skillHash } from '../../skill/document.ts';
import type { StepScope } from './step-scope.ts';

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

export class GateOverlap {
  readonly guess: Guess;
  private started?: { skill: string; done: Promise<number> };
  private wrong = false;

  constructor(
    private readonly s: StepScope,
    /** The decisions so far (a record's action is enough). */
    history: Pick<HistoryRecord, 'action'>[],
    private readonly next: Batch[],
  ) {
    this.guess = guessKept(history, s.ctx.settings.gate.on);
  }

  /** This step's rollouts are done: a guess of the current skill runs ahead now. */
  rolloutsDone(): void {
    if (this.guess === 'current') this.start(this.s.skill);
  }

  /** The gate's rollouts are queued: a guess of the candidate runs ahead behind them. */
  gateQueued(candidate: string): void {
    if (this.guess === 'candidate') this.start(candidate);
  }

  /** Called with the skill the next step starts from: a wrong guess starts no more rollouts. */
  settle(nextSkill: string): void {
    const started = this.started;
    if (!started) return;
    const right = skillHash(nextSkill) === skillHash(started.skill);
    this.wrong = !right;
    const { step, epoch, ctx } = this.s;
    void started.done.then((rollouts) => ctx.events.emit({ type: 'gate_overlap', step, epoch, guess: this.guess, right, rollouts, wasted: right ? 0 : rollouts }));
  }

  private start(skill: string): void {
    if (this.started) return;
    const runs = this.next.map((b) => this.s.ctx.rollouts.run(skill, b.items, { seed: b.seed, training: true, order: reflectionOrder(b), stop: () => this.wrong }));
    // A failure here is the next step's to meet (it runs those rollouts again); nothing is lost.
    const done = Promise.all(runs).then(
      (rs) => rs.reduce((n, r) => n + r.ran, 0),
      () => 0,
    );
    this.started = { skill, done };
  }
}
