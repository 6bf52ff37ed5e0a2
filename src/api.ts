/**
 * The library's entry points: train a skill and evaluate skills from a config file, with typed
 * options and an event callback; what `skillopt train` and `skillopt eval` do, without a console.
 */
import path from 'node:path';
import { runTraining } from './app/train.ts';
import { loadConfig } from './config/load.ts';
import type { TrainOutcome } from './engine/trainer.ts';
import { runEvaluation } from './app/eval/evaluate.ts';
import type { EvalSummary } from './app/eval/summary.ts';
import type { ChatModel, Role } from './model/types.ts';
import type { RunEvent } from './run/events.ts';

interface Common {
  /** The config file (YAML); relative paths in it resolve against its directory. */
  config: string;
  /** `key=value` overrides, as `--set` (`optimizer.pool_size=3`). */
  overrides?: string[];
  /** Variables to read keys from instead of `process.env` and `.env`. */
  environment?: Record<string, string | undefined>;
}

export interface TrainOptions extends Common {
  /** The run directory; an unfinished run there resumes, a finished one is reported. */
  out: string;
  /** Called with every event of the run (stages, gate decisions, epoch boundaries) as it happens. */
  onEvent?: (event: RunEvent) => void;
  /** Abort to stop at a safe point; the run ends `stopped` and resumes with the same call. */
  signal?: AbortSignal;
  /** Print progress on the console as the CLI does (default false). */
  console?: boolean;
  /** Models to use instead of the config's, per role. */
  models?: Partial<Record<Role, ChatModel>>;
}

/** Trains the skill the config names; the best skill is `<out>/best_skill.md`. */
export async function train(options: TrainOptions): Promise<TrainOutcome> {
  const loaded = loadConfig(options.config, { overrides: options.overrides, environment: options.environment });
  return runTraining({
    loaded,
    outRoot: path.resolve(options.out),
    configFile: options.config,
    console: options.console ?? false,
    environment: options.environment,
    onEvent: options.onEvent,
    signal: options.signal,
    models: options.models,
  });
}

export interface EvaluateOptions extends Common {
  /** The skill files; each further one is compared with the first. */
  skills: string[];
  /** Where `eval_summary.json`, `eval_summary.md` and the rollouts go. */
  out: string;
  /** `train`, `val`, `test` (default) or `all`. */
  split?: string;
  /** `BACKEND:MODEL` of each target (the transfer check); none = the config's `model.target`. */
  targets?: string[];
  /** Samples per item (default 1). */
  repeats?: number;
}

/** Scores the skills on the split with every target: means with intervals, paired tests against the first skill. */
export async function evaluate(options: EvaluateOptions): Promise<EvalSummary> {
  const loaded = loadConfig(options.config, { overrides: options.overrides, environment: options.environment });
  return runEvaluation({
    loaded,
    outRoot: path.resolve(options.out),
    configFile: options.config,
    skillFiles: options.skills,
    split: options.split ?? 'test',
    targets: options.targets,
    repeats: options.repeats,
    environment: options.environment,
    out: null,
  });
}
