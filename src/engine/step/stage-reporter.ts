/** A step's stages as the event log tells them: each is announced, timed and reported finished once. */
import type { EventLog, Stage } from '../../run/events.ts';
import { round } from '../../util/round.ts';

/** The codes behind a stage's words, as the records hold them. */
export type Stats = Record<string, number | string | boolean | null>;

export class StageReporter {
  private last = performance.now();
  private readonly started = performance.now();
  /** Seconds per stage, for the step record (`rollout_s`, …). */
  readonly timing: Record<string, number> = {};

  constructor(
    private readonly events: EventLog,
    /** Throws the run's stop when a limit is reached: a stage starts only within the run's limits. */
    private readonly admit: () => void,
    private readonly step: number,
    private readonly epoch: number,
  ) {}

  start(stage: Stage, detail: string, stats?: Stats): void {
    this.admit();
    this.events.emit({
      type: 'stage_started',
      step: this.step,
      epoch: this.epoch,
      stage,
      detail,
      ...(stats ? { stats } : {}),
    });
  }

  /** Ends `stage`: its time runs from the end of the previous one. */
  finish(stage: Stage, detail: string, stats?: Stats): void {
    const now = performance.now();
    const seconds = (now - this.last) / 1000;
    this.timing[`${stage}_s`] = round(seconds, 1);
    this.last = now;
    this.events.emit({
      type: 'stage_finished',
      step: this.step,
      epoch: this.epoch,
      stage,
      seconds,
      detail,
      ...(stats ? { stats } : {}),
    });
  }

  progress(stage: Stage): (done: number, total: number) => void {
    return (done, total) => this.events.emit({ type: 'stage_progress', step: this.step, stage, done, total });
  }

  /** The step's wall time so far, in seconds. */
  wallTime(): number {
    return (performance.now() - this.started) / 1000;
  }
}
