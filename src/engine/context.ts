/**
 * What a training run's parts share, built once by the application (`app/train.ts`). Each part
 * names the pieces it uses (`Pick<RunContext, …>`): the step, the epoch boundary and the final
 * evaluation each read a few of them, and no part reads the raw config.
 */
import type { RunAudit } from '../audit/run-audit.ts';
import type { LimitFunction } from 'p-limit';
import type { Env, Item } from '../envs/types.ts';
import type { Admission } from '../model/admission.ts';
import type { Ledger } from '../model/ledger.ts';
import type { EventLog } from '../run/events.ts';
import type { RunDir } from '../run/layout.ts';
import type { HistoryRecord } from '../run/records.ts';
import type { StepBufferEntry } from '../protocol/optimizer.ts';
import type { Schedule } from './batches.ts';
import type { LrScheduler } from './lr-schedulers.ts';
import type { OptimizerContext } from './optimizer-model/ask.ts';
import type { TrainSettings } from './settings.ts';
import type { Transfer } from '../run/records.ts';
import type { CandidatePool } from './candidate-pool/candidate-pool.ts';
import type { SkillStates } from './stages/gate.ts';
import type { SkillPackage } from '../skill/package/package.ts';
import type { PackageChecker } from './stages/package-check.ts';
import type { Rollouts } from './stages/rollout.ts';
import type { SelectionEvaluator } from './stages/selection-eval.ts';

export interface RunContext {
  settings: TrainSettings;
  dir: RunDir;
  events: EventLog;
  /** The env's advice for the analysts and its task types (its rollouts go through `rollouts`). */
  env: Pick<Env, 'analystGuide' | 'taskTypes'>;
  train: Item[];
  /** The held-out test items (first `test_env_num` of test). */
  test: Item[];
  /** Every model call of the run, for the step records, the summary and the budget. */
  ledger: Ledger;
  /** Whether model calls may be sent: the run's limits, and its stop once one is reached. */
  admission: Admission;
  rollouts: Rollouts;
  selection: SelectionEvaluator;
  /** Rollouts whose answers can wait (the final evaluation on test), sent as batches (`model.target.batch`); absent: `rollouts`. */
  batchRollouts?: Rollouts;
  /** The baseline's selection evaluation as batches (`model.target.batch_baseline`); absent: `selection`. */
  baselineSelection?: SelectionEvaluator;
  opt: OptimizerContext;
  analystLimit: LimitFunction;
  plan: Schedule;
  /** The skill training starts from: a single document, or a package. */
  skillInit: SkillPackage;
  clock: RunClock;
  /** Checks package candidates before the gate; absent for a single document. */
  packageChecks?: PackageChecker;
  /** Aborted when the run is asked to stop (Ctrl-C): it stops at the next safe point. */
  stop?: AbortSignal;
  /** The config as `summary.json` records it (secrets redacted). */
  recordedConfig: unknown;
  /** The audit of candidates and test figures (`evaluation.audit`); absent when its checks are off. */
  audit?: RunAudit;
  /** Scores the initial and best skill files on `evaluation.transfer_targets` (none: no transfer). */
  transfer?: (skills: { initial: string; best: string }) => Promise<Transfer>;
}

/** The run's wall time: this process's, plus that of the earlier processes of a resumed run. */
export class RunClock {
  private readonly startedAt = Date.now();

  constructor(private before = 0) {}

  resumedAfter(seconds: number): void {
    this.before = seconds;
  }

  elapsedSeconds(): number {
    return this.before + (Date.now() - this.startedAt) / 1000;
  }
}

export interface TrainState extends SkillStates {
  lastStep: number;
  /** The initial skill's selection score. */
  baselineScore: number;
  scheduler: LrScheduler;
  /** The last epoch whose boundary (slow update and meta skill) is complete. */
  boundariesDone: number;
  stepBuffer: StepBufferEntry[];
  history: HistoryRecord[];
  /** The candidate pool (`optimizer.pool_size`); undefined: one current skill. */
  pool?: CandidatePool;
}
