/**
 * The gate overlapped with the next step (`evaluation.gate_overlap`): while the gate scores a
 * candidate, the next step's training rollouts start, in the order its reflection consumes them,
 * under the skill the gate is guessed to keep. They run through the score cache, so a next step
 * that starts from that skill takes their results (finished or still running) instead of running
 * them again, and decides exactly as it would have. A wrong guess starts no more of them; those
 * already run are wasted, and reported.
 */
import { isAccepted, isSkipped, type HistoryRecord } from '../../run/records.ts';
import { reflectionOrder, type Batch } from '../batches.ts';
import { skillHash } from '../../skill/document.ts';
import type { StepScope } from './step-scope.ts';

export type Guess = 'candidate' | 'current';

/** The skill the gate is more likely to keep: with no gate the candidate; else what most of its decisions so far kept (the current skill on a tie). */
export function guessKept(history: HistoryRecord[], gateOn: boolean): Guess {
  if (!gateOn) return 'candidate';
  const decided = history.filter((r) => !isSkipped(r.action));
  const kept = decided.filter((r) => isAccepted(r.action)).length;
  return kept * 2 > decided.length ? 'candidate' : 'current';
}

export interface RunAhead {
  /** Called with the skill the next step starts from: a wrong guess starts no more rollouts. */
  settle(nextSkill: string): void;
}

/** Starts the rollouts of the next step's `batches` under the guessed skill; call it once the gate's own rollouts are queued, so that they go first. */
export function runAhead(s: StepScope, history: HistoryRecord[], candidate: string, batches: Batch[]): RunAhead {
  const guess = guessKept(history, s.ctx.settings.gate.on);
  const skill = guess === 'candidate' ? candidate : s.skill;
  let wrong = false;
  const runs = batches.map((b) => s.ctx.rollouts.run(skill, b.items, { seed: b.seed, training: true, order: reflectionOrder(b), stop: () => wrong }));
  // A failure here is the next step's to meet (it runs those rollouts again); nothing is lost.
  const done = Promise.all(runs).then(
    (rs) => rs.reduce((n, r) => n + r.ran, 0),
    () => 0,
  );
  return {
    settle(nextSkill) {
      const right = skillHash(nextSkill) === skillHash(skill);
      wrong = !right;
      void done.then((rollouts) => s.ctx.events.emit({ type: 'gate_overlap', step: s.step, epoch: s.epoch, guess, right, rollouts, wasted: right ? 0 : rollouts }));
    },
  };
}
