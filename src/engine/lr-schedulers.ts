/**
 * Learning-rate schedulers: the budget of edits per step. Like torch's schedulers, each is a
 * small object with `step()` and a state that resume restores (rather than recomputing it from
 * the step number, which drifts when steps were skipped).
 *
 * With T total steps and t = min(k, T) / T at the k-th call (the first call is already at
 * t = 1/T; the T-th returns the minimum):
 *   constant:   max
 *   linear:     max(min, round(max + (min - max) t))
 *   cosine:     max(min, round(min + (max - min) (1 + cos(pi t)) / 2))
 *   autonomous: no limit (the optimizer chooses the budget each step)
 * `round` is round-half-to-even, as the original.
 */
export type SchedulerMode = 'constant' | 'linear' | 'cosine' | 'autonomous';

export const NO_LIMIT = 999;

/** Round half to even: 2.5 -> 2, 3.5 -> 4. */
export function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  const eps = 1e-9;
  if (Math.abs(diff - 0.5) < eps) return floor % 2 === 0 ? floor : floor + 1;
  return Math.round(x);
}

export interface SchedulerState {
  current_step: number;
}

export class LrScheduler {
  private currentStep = 0;

  constructor(
    readonly mode: SchedulerMode,
    readonly maxLr: number,
    readonly minLr: number,
    readonly totalSteps: number,
  ) {}

  /** The budget at call `k` (1-based), without advancing. */
  valueAt(k: number): number {
    const { maxLr, minLr } = this;
    const T = this.totalSteps;
    if (this.mode === 'constant') return maxLr;
    if (this.mode === 'autonomous') return NO_LIMIT;
    if (T <= 1) return maxLr;
    const t = Math.min(k, T) / T;
    if (this.mode === 'linear') return Math.max(minLr, roundHalfEven(maxLr + (minLr - maxLr) * t));
    return Math.max(minLr, roundHalfEven(minLr + 0.5 * (maxLr - minLr) * (1 + Math.cos(Math.PI * t))));
  }

  step(): number {
    this.currentStep += 1;
    return this.valueAt(this.currentStep);
  }

  state(): SchedulerState {
    return { current_step: this.currentStep };
  }

  load(state: Partial<SchedulerState> | undefined): void {
    this.currentStep = state?.current_step ?? 0;
  }
}

export function buildScheduler(mode: string, maxLr: number, minLr: number, totalSteps: number): LrScheduler {
  if (!['constant', 'linear', 'cosine', 'autonomous'].includes(mode)) {
    throw new Error(`unknown scheduler mode '${mode}' (expected constant, linear, cosine or autonomous)`);
  }
  return new LrScheduler(mode as SchedulerMode, maxLr, Math.min(minLr, maxLr), totalSteps);
}
