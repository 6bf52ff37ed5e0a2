/**
 * Learning-rate schedulers: the budget of edits per step. As in torch's `lr_scheduler`, each
 * policy is a small object with `step()` and a state that a resume restores (rather than
 * recomputing it from the step number, which drifts when steps were skipped):
 *
 * With T total steps and t = min(k, T) / T at the k-th call (the first call is already at
 * t = 1/T; the T-th returns the minimum):
 *   constant:   max
 *   linear:     max(min, round(max + (min - max) t))
 *   cosine:     max(min, round(min + (max - min) (1 + cos(pi t)) / 2))
 *   autonomous: no limit (the original's `lr_scheduler: autonomous`: ranking never cuts)
 * `round` is round-half-to-even, as the original. Letting the optimizer choose the budget
 * (`lr_control_mode: autonomous`) is not a schedule: see `stages/edit-budget.ts`.
 */
import type { Config } from '../config/schema.ts';

export type SchedulerKind = Config['optimizer']['lr_scheduler'];

/** What `runtime_state.json` keeps of a scheduler (its field `scheduler`). */
export interface SchedulerState {
  current_step: number;
}

export interface LrScheduler {
  /** Advances one step and returns its budget. */
  step(): number;
  /** The budget the next `step()` returns, without advancing. */
  peek(): number;
  state(): SchedulerState;
  load(state: Partial<SchedulerState> | undefined): void;
}

/** The original's stand-in for "no limit". */
export const NO_LIMIT = 999;

/** Round half to even: 2.5 -> 2, 3.5 -> 4. */
export function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  const eps = 1e-9;
  if (Math.abs(diff - 0.5) < eps) return floor % 2 === 0 ? floor : floor + 1;
  return Math.round(x);
}

/** Counts its calls; a policy says what call `k` (1-based) gives. */
abstract class CountingScheduler implements LrScheduler {
  private currentStep = 0;

  abstract valueAt(k: number): number;

  step(): number {
    this.currentStep += 1;
    return this.valueAt(this.currentStep);
  }

  peek(): number {
    return this.valueAt(this.currentStep + 1);
  }

  state(): SchedulerState {
    return { current_step: this.currentStep };
  }

  load(state: Partial<SchedulerState> | undefined): void {
    this.currentStep = state?.current_step ?? 0;
  }
}

export class ConstantLr extends CountingScheduler {
  constructor(private readonly maxLr: number) {
    super();
  }

  valueAt(): number {
    return this.maxLr;
  }
}

export class NoLimitLr extends CountingScheduler {
  valueAt(): number {
    return NO_LIMIT;
  }
}

/** A decay from `maxLr` to `minLr` over `totalSteps`, then `minLr`; `at(t)` is the unrounded value at t in (0, 1]. */
abstract class DecayingLr extends CountingScheduler {
  constructor(
    readonly maxLr: number,
    readonly minLr: number,
    readonly totalSteps: number,
  ) {
    super();
  }

  protected abstract at(t: number): number;

  valueAt(k: number): number {
    if (this.totalSteps <= 1) return this.maxLr;
    return Math.max(this.minLr, roundHalfEven(this.at(Math.min(k, this.totalSteps) / this.totalSteps)));
  }
}

export class LinearLr extends DecayingLr {
  protected at(t: number): number {
    return this.maxLr + (this.minLr - this.maxLr) * t;
  }
}

export class CosineLr extends DecayingLr {
  protected at(t: number): number {
    return this.minLr + 0.5 * (this.maxLr - this.minLr) * (1 + Math.cos(Math.PI * t));
  }
}

export function buildScheduler(
  kind: string,
  maxLr: number,
  minLr: number,
  totalSteps: number,
): LrScheduler & { valueAt(k: number): number } {
  const min = Math.min(minLr, maxLr);
  switch (kind) {
    case 'constant':
      return new ConstantLr(maxLr);
    case 'linear':
      return new LinearLr(maxLr, min, totalSteps);
    case 'cosine':
      return new CosineLr(maxLr, min, totalSteps);
    case 'autonomous':
      return new NoLimitLr();
    default:
      throw new Error(`unknown scheduler mode '${kind}' (expected constant, linear, cosine or autonomous)`);
  }
}
