/**
 * Setting up a training run: the run directory (locked), the event log and console reporter,
 * the env and its splits, the models, then the trainer. A run directory that already holds a
 * run of the same config is resumed.
 */
import path from 'node:path';
import pLimit from 'p-limit';
import type { LoadedConfig } from '../config/load.ts';
import { preflight } from '../config/preflight.ts';
import { redact } from '../config/redact.ts';
import type { Config } from '../config/schema.ts';
import { UserError } from '../errors.ts';
import { createEnv } from '../envs/registry.ts';
import type { Env, Splits } from '../envs/types.ts';
import { buildRoleModels, type StackOptions } from '../model/stack.ts';
import { FatalModelError, type ChatModel, type ReasoningEffort, type Role } from '../model/types.ts';
import { readJson } from '../run/atomic.ts';
import { EventLog } from '../run/events.ts';
import { RunDir } from '../run/layout.ts';
import { acquireRunLock } from '../run/lock.ts';
import { attachConsoleReporter } from '../run/reporter.ts';
import { countTokens, loadSkill } from '../skill/document.ts';
import { resolveConfigPath } from '../util/paths.ts';
import { budgetStop, unpricedBudget } from './budget.ts';
import { elapsedSeconds, type RunContext } from './context.ts';
import { firstN, schedule } from './data.ts';
import { lrControl, pairPolicy, updateMode } from './modes.ts';
import { ScoreCache } from './score-cache.ts';
import { persistState } from './state.ts';
import { train, type TrainOutcome } from './trainer.ts';

export interface RunOptions {
  loaded: LoadedConfig;
  outRoot: string;
  /** The config file (relative paths in it resolve against its directory). */
  configFile: string;
  /** Print events on the console (default true). */
  console?: boolean;
  /** Replace a role's model (tests, benchmarks). */
  models?: Partial<Record<Role, ChatModel>>;
  environment?: StackOptions['environment'];
}

/** Keys that may change between a run and its resume: limits, caching, concurrency. */
const RESUMABLE_CHANGES = [/^budget\./, /^cache\./, /^model\.\w+\.(concurrency|rpm|tpm|timeout_s|max_retries|max_wait_s|options\.latency_ms)$/, /^env\.workers$/, /^env\.out_root$/];

function flatten(value: unknown, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else out[prefix] = value;
  return out;
}

/** A resumed run must train with the same settings it started with. */
function checkResumable(dir: RunDir, config: Config, secretPaths: Set<string>): void {
  const stored = readJson<{ config?: unknown }>(dir.config);
  if (!stored?.config || !dir.readRuntimeState()) return;
  const before = flatten(stored.config);
  const now = flatten(JSON.parse(JSON.stringify(redact(config, secretPaths))));
  const changed = [...new Set([...Object.keys(before), ...Object.keys(now)])].filter(
    (k) => JSON.stringify(before[k]) !== JSON.stringify(now[k]) && !RESUMABLE_CHANGES.some((r) => r.test(k)),
  );
  if (changed.length > 0) {
    const shown = changed.slice(0, 5).map((k) => `${k}: ${JSON.stringify(before[k])} -> ${JSON.stringify(now[k])}`);
    throw new UserError(`${dir.root} holds a run started with a different config (${shown.join('; ')}); use another output directory, or restore those settings to resume it`);
  }
}

/**
 * The env of a config and its splits, truncated to `env.limit`. Item ids must be unique across
 * the splits: scores are cached by item id.
 */
export async function buildEnv(loaded: LoadedConfig, outRoot?: string): Promise<{ env: Env; splits: Splits }> {
  const env = createEnv(loaded, outRoot);
  const splits = await env.load();
  const limit = loaded.config.env.limit;
  if (limit > 0) for (const k of ['train', 'val', 'test'] as const) splits[k] = splits[k].slice(0, limit);
  const seen = new Map<string, string>();
  for (const k of ['train', 'val', 'test'] as const) {
    for (const item of splits[k]) {
      const other = seen.get(item.id);
      if (other) throw new UserError(`env '${env.name}': item id '${item.id}' is in both the ${other} and the ${k} split; ids must be unique across splits`);
      seen.set(item.id, k);
    }
  }
  return { env, splits };
}

export async function runTraining(opts: RunOptions): Promise<TrainOutcome> {
  const { config, secretPaths } = opts.loaded;
  const dir = new RunDir(opts.outRoot);
  const lock = acquireRunLock(dir.root);
  const events = new EventLog(dir.events);
  const detach = opts.console === false ? () => {} : attachConsoleReporter(events);
  let ctx: RunContext | undefined;
  try {
    checkResumable(dir, config, secretPaths);
    const skillInit = loadSkill(resolveConfigPath(config.env.skill_init, opts.loaded.baseDirOf('env.skill_init')), { startBlank: config.env.start_blank });
    const { env, splits } = await buildEnv(opts.loaded, dir.root);
    for (const w of splits.warnings ?? []) events.warn(w);
    for (const w of preflight(config, { train: splits.train.length, val: splits.val.length, test: splits.test.length })) events.warn(w);
    const maxTokens = config.optimizer.max_skill_tokens;
    if (maxTokens > 0 && countTokens(skillInit) > maxTokens) {
      events.warn(`the initial skill has ${countTokens(skillInit)} tokens, over optimizer.max_skill_tokens=${maxTokens}: only edits that shorten it can apply`);
    }
    const plan = schedule(splits.train.length, config.train.batch_size, config.train.accumulation, config.train.num_epochs);
    const mode = updateMode(config.optimizer.skill_update_mode);
    const models = await buildRoleModels(config, {
      ledgerFile: dir.calls,
      environment: opts.environment,
      override: opts.models,
      configDir: opts.loaded.baseDirOf('cache.path'),
      onEvent: (e) => events.emit(e),
      limit: (totals, inFlight) => budgetStop(config.budget, totals, ctx ? elapsedSeconds(ctx) / 60 : 0, inFlight),
    });
    const roles: Role[] = env.usesJudge ? ['target', 'optimizer', 'judge'] : ['target', 'optimizer'];
    const priced = unpricedBudget(config.budget, [...models.unpriced].filter(([role]) => roles.includes(role)));
    if (priced.error) {
      models.close();
      throw new UserError(priced.error);
    }
    if (priced.warning) events.warn(priced.warning);
    dir.writeJson(dir.config, {
      config: redact(config, secretPaths),
      derived: { train_size: plan.trainSize, steps_per_epoch: plan.stepsPerEpoch, batches_per_epoch: plan.batchesPerEpoch, total_steps: plan.totalSteps, skill_update_mode: mode, lr_control_mode: lrControl(config.optimizer.lr_control_mode, mode) },
      files: opts.loaded.files,
    });
    ctx = {
      config,
      secretPaths,
      dir,
      events,
      env,
      splits,
      selection: firstN(splits.val, config.evaluation.sel_env_num),
      test: firstN(splits.test, config.evaluation.test_env_num),
      models,
      scores: new ScoreCache(dir.path('scores.jsonl')),
      rolloutLimit: pLimit(config.env.workers),
      analystLimit: pLimit(config.gradient.analyst_workers),
      opt: {
        optimizer: models.optimizer,
        mode,
        env: env.name,
        maxTokens: config.model.optimizer_max_completion_tokens,
        reasoningEffort: (config.model.optimizer.reasoning_effort || config.model.reasoning_effort || undefined) as ReasoningEffort | undefined,
        warn: (m) => events.warn(m),
      },
      mode,
      lrControl: lrControl(config.optimizer.lr_control_mode, mode),
      pairPolicy: pairPolicy(config.optimizer.longitudinal_pair_policy),
      scoring: {
        metric: config.evaluation.gate_metric,
        mixedWeight: config.evaluation.gate_mixed_weight,
        density: config.evaluation.use_semantic_density
          ? {
              weight: config.evaluation.semantic_density_weight,
              words: typeof config.evaluation.leading_words === 'string' ? config.evaluation.leading_words.split(',').map((w) => w.trim()) : config.evaluation.leading_words,
            }
          : undefined,
      },
      plan,
      skillInit,
      maxSkillTokens: config.optimizer.max_skill_tokens,
      startedAt: Date.now(),
      elapsedBefore: 0,
    };
    events.emit({
      type: 'run_started',
      out_root: dir.root,
      env: env.name,
      target: models.target.id,
      optimizer: models.optimizer.id,
      epochs: config.train.num_epochs,
      steps_per_epoch: plan.stepsPerEpoch,
      total_steps: plan.totalSteps,
      resume_from: (dir.readRuntimeState()?.last_completed_step ?? 0) + 1,
    });
    return await train(ctx);
  } catch (err) {
    // A bug of ours keeps its stack in the event log; a user's input error or a model's refusal needs none.
    const bug = err instanceof Error && !(err instanceof UserError) && !(err instanceof FatalModelError);
    events.emit({ type: 'run_failed', message: err instanceof Error ? err.message : String(err), ...(bug && err.stack ? { stack: err.stack } : {}) });
    const runtime = dir.readRuntimeState();
    if (runtime) dir.writeJson(dir.runtimeState, { ...runtime, status: 'failed' });
    throw err;
  } finally {
    detach();
    ctx?.scores.close();
    ctx?.models.ledger.close();
    ctx?.models.close();
    events.close();
    lock.release();
  }
}

