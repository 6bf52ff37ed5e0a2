/** Everything a training run's stages share, built once by `run.ts`. */
import type { LimitFunction } from 'p-limit';
import type { Config } from '../config/schema.ts';
import type { Env, Item, Splits } from '../envs/types.ts';
import type { RoleModels } from '../model/stack.ts';
import type { EventLog } from '../run/events.ts';
import type { RunDir } from '../run/layout.ts';
import type { HistoryRecord } from '../run/records.ts';
import type { OptimizerContext } from './optimizer/ask.ts';
import type { Schedule } from './batches.ts';
import type { LrScheduler } from './lr-schedulers.ts';
import type { LrControl, PairPolicy } from './modes.ts';
import type { StepBufferEntry, UpdateMode } from '../protocol/optimizer.ts';
import type { ScoreCache } from './scoring/score-cache.ts';
import type { GateScoring } from './scoring/metrics.ts';

export interface RunContext {
  config: Config;
  /** Config paths whose values came from secret variables (redacted wherever written). */
  secretPaths: Set<string>;
  dir: RunDir;
  events: EventLog;
  env: Env;
  splits: Splits;
  /** The selection split the gate scores on (first `sel_env_num` of val). */
  selection: Item[];
  /** The held-out test items (first `test_env_num` of test). */
  test: Item[];
  models: RoleModels;
  scores: ScoreCache;
  rolloutLimit: LimitFunction;
  analystLimit: LimitFunction;
  opt: OptimizerContext;
  mode: UpdateMode;
  lrControl: LrControl;
  pairPolicy: PairPolicy;
  scoring: GateScoring;
  plan: Schedule;
  skillInit: string;
  /** Largest skill allowed, in tokens (0 = none). */
  maxSkillTokens: number;
  /** When this process started, and the run's wall time in earlier processes. */
  startedAt: number;
  elapsedBefore: number;
  /** Aborted when the run is asked to stop (Ctrl-C): it stops at the next safe point. */
  stop?: AbortSignal;
}

export interface SkillState {
  skill: string;
  score: number;
  origin: string;
}

export interface TrainState {
  lastStep: number;
  /** The initial skill's selection score. */
  baselineScore: number;
  current: SkillState;
  best: SkillState & { step: number };
  scheduler: LrScheduler;
  /** The last epoch whose boundary (slow update and meta skill) is complete. */
  boundariesDone: number;
  stepBuffer: StepBufferEntry[];
  history: HistoryRecord[];
}

export function elapsedSeconds(ctx: RunContext): number {
  return ctx.elapsedBefore + (Date.now() - ctx.startedAt) / 1000;
}

export const round = (x: number, digits: number) => Number(x.toFixed(digits));
