/**
 * Setting up a training run: checks that only read (a resumed run's settings, a finished run,
 * the skill file), then the run directory (locked), the event log and console reporter, the env
 * and its splits, the models, then the trainer. A run directory that already holds a run of the
 * same config is resumed; one that holds a finished run is reported, untouched. A refused
 * command writes nothing, and a new run that ends before anything was paid for or committed
 * leaves no directory behind.
 */
import { buildRunAudit, usesJudgeModel } from '../audit/run-audit.ts';
import fs from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import type { LoadedConfig } from '../config/load.ts';
import { preflight } from '../config/preflight.ts';
import { checkTransferTargets, transferHook } from './transfer.ts';
import { redact } from '../config/redact.ts';
import type { Config } from '../config/schema.ts';
import { UserError, errorMessage } from '../errors.ts';
import { buildEnv } from '../envs/build.ts';
import { buildRoleModels, type RoleModels, type StackOptions } from '../model/stack.ts';
import { FatalModelError, RunStop, type ChatModel, type ReasoningEffort, type Role } from '../model/types.ts';
import { readJson, removeStaleTempFiles } from '../run/atomic.ts';
import { EventLog, type RunEvent } from '../run/events.ts';
import { RunDir } from '../run/layout.ts';
import { markActivity } from '../run/activity.ts';
import { acquireRunLock } from '../run/lock.ts';
import { attachConsoleReporter, formatFinishedRun } from '../run/reporter.ts';
import { resumeCommand, type Invocation } from '../run/resume-command.ts';
import { historyRepair, type HistoryRepair } from '../run/state-rebuild.ts';
import { countTokens } from '../skill/document.ts';
import { loadSkillPackage } from '../skill/package/source.ts';
import type { SkillPackage } from '../skill/package/package.ts';
import { PackageChecker } from '../engine/stages/package-check.ts';
import { firstMissing } from '../util/paths.ts';
import { RunClock, type RunContext } from '../engine/context.ts';
import type { OptimizerContext } from '../engine/optimizer-model/ask.ts';
import { Rollouts } from '../engine/stages/rollout.ts';
import { SelectionEvaluator } from '../engine/stages/selection-eval.ts';
import { firstN, schedule } from '../engine/batches.ts';
import { budgetStop, unpricedBudget } from '../engine/budget-limits.ts';
import { trainSettings } from '../engine/settings.ts';
import { trainingChanges } from './resume-check.ts';
import { refuseOnWorkers, remoteRollouts } from './remote.ts';
import { batchPhases } from './batch-phases.ts';
import { baselineAtCeiling } from './useless-run.ts';
import { ScoreCache } from '../engine/scoring/score-cache.ts';
import { train, type TrainOutcome } from '../engine/trainer.ts';

export interface RunOptions {
  loaded: LoadedConfig;
  outRoot: string;
  /** The config file (relative paths in it resolve against its directory). */
  configFile: string;
  /** Print events on the console (default true). */
  console?: boolean;
  /** On the console, the records' codes beside their words (`--verbose`). */
  verbose?: boolean;
  /** Replace a role's model (tests, benchmarks). */
  models?: Partial<Record<Role, ChatModel>>;
  environment?: StackOptions['environment'];
  /** Take over a run lock whose owner cannot be checked from here (the user knows it is gone). */
  forceUnlock?: boolean;
  /**
   * Aborted to stop the run at a safe point (Ctrl-C): no new model call starts, the calls in
   * flight finish and are recorded, and the run ends `stopped`, resumable.
   */
  signal?: AbortSignal;
  /** How the run was started, for the command that resumes it (default: the config file alone). */
  invocation?: Invocation;
  /** Called once every check has passed, just before the run starts (the CLI prints the full config). */
  onStart?: () => void;
  /** Called with every event of the run as it is written to `events.jsonl`. */
  onEvent?: (event: RunEvent) => void;
}

/**
 * A run directory may be resumed only with the settings it started with. Reads only: a refused
 * command leaves the directory as it was.
 */
function checkResumable(dir: RunDir, config: Config, secretPaths: Set<string>): void {
  const stored = readJson<{ config?: unknown }>(dir.config);
  if (!stored?.config) return;
  const changed = trainingChanges(stored.config, config, secretPaths);
  if (changed.length > 0) {
    throw new UserError(
      `${dir.root} holds a run started with a different config (${changed.slice(0, 5).join('; ')}); use another output directory, or restore those settings to resume it`,
    );
  }
}

/** The summary of a run that has finished, or undefined. */
function finishedSummary(dir: RunDir): Record<string, unknown> | undefined {
  if (dir.readRuntimeState()?.status !== 'finished') return undefined;
  return readJson<Record<string, unknown>>(dir.summary);
}

/** Removes a run directory this process created, and the parents it created if they are empty. */
function removeCreated(dir: string, createdFrom: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  for (let d = path.dirname(dir); d.length >= createdFrom.length && d !== path.dirname(d); d = path.dirname(d)) {
    try {
      fs.rmdirSync(d);
    } catch {
      break; // not empty: something else lives there
    }
  }
}

export async function runTraining(opts: RunOptions): Promise<TrainOutcome> {
  const { config, secretPaths } = opts.loaded;
  const dir = new RunDir(opts.outRoot);
  const invocation = opts.invocation ?? { config: opts.configFile, overrides: [] };
  const resume = (extra: string[] = []) => resumeCommand(invocation, dir.root, extra);
  const say = (text: string) => opts.console !== false && process.stdout.write(`${text}\n`);

  // Checks that only read: nothing is written before they pass.
  checkTransferTargets(opts.loaded);
  let history: HistoryRepair | undefined;
  if (dir.exists()) {
    checkResumable(dir, config, secretPaths);
    const summary = finishedSummary(dir);
    if (summary) {
      say(formatFinishedRun(dir.root, summary));
      return { status: 'finished', summary, alreadyFinished: true };
    }
    const runtime = dir.readRuntimeState();
    if (runtime) history = historyRepair(dir, runtime.last_completed_step);
  }
  const initial = loadSkillPackage(config.env.skill_init, {
    startBlank: config.env.start_blank,
    key: 'env.skill_init',
    baseDir: opts.loaded.baseDirOf('env.skill_init'),
  });
  const skillInit = initial.pkg;

  const createdFrom = firstMissing(dir.root);
  const lock = acquireRunLock(dir.root, { forceUnlock: opts.forceUnlock });
  const events = new EventLog(dir.events);
  const detachConsole =
    opts.console === false
      ? () => {}
      : attachConsoleReporter(events, process.stdout, process.stderr, { verbose: opts.verbose });
  const detachCaller = opts.onEvent ? events.on(opts.onEvent) : () => {};
  const detach = () => {
    detachConsole();
    detachCaller();
  };
  let models: RoleModels | undefined;
  let interrupt: (() => void) | undefined;
  if (lock.replaced) events.warn(`${dir.root}: ${lock.replaced}`);
  // A Sleep night started while this run trains waits for another night.
  const activity = markActivity('train', dir.root, (m) => events.warn(m));
  const leftovers = removeStaleTempFiles(dir.root);
  if (leftovers.length)
    events.info(`removed ${leftovers.length} temporary file(s) left by writes that were interrupted`);
  let closeScores = () => {};
  let closeRemote: () => Promise<void> | undefined = () => undefined;
  let started = false;
  let discard = false;
  try {
    // Problems found while setting up are reported once the run has started (or not at all).
    const warnings: string[] = [];
    if (history) {
      dir.writeJson(dir.history, history.records);
      warnings.push(
        `${dir.history} is unreadable (${history.problem}): ${history.records.length ? `rebuilt from the records of steps 1 to ${history.records.length}` : 'no step is committed yet, so it starts empty'}`,
      );
    }
    const { env, splits } = await buildEnv(opts.loaded, dir.root);
    warnings.push(...(splits.warnings ?? []));
    warnings.push(
      ...preflight(config, { train: splits.train.length, val: splits.val.length, test: splits.test.length }),
    );
    const maxTokens = config.optimizer.max_skill_tokens;
    if (maxTokens > 0 && countTokens(skillInit.skill) > maxTokens) {
      warnings.push(
        `the initial skill has ${countTokens(skillInit.skill)} tokens, over optimizer.max_skill_tokens=${maxTokens}: only edits that shorten it can apply`,
      );
    }
    const plan = schedule(
      splits.train.length,
      config.train.batch_size,
      config.train.accumulation,
      config.train.num_epochs,
    );
    const settings = trainSettings(config, { packageSkill: initial.source.kind !== 'document' });
    const clock = new RunClock();
    models = await buildRoleModels(config, {
      ledgerFile: dir.calls,
      environment: opts.environment,
      override: opts.models,
      configDir: opts.loaded.baseDirOf('cache.path'),
      onEvent: (e) => events.emit(e),
      limit: (totals, inFlight) => budgetStop(config.budget, totals, clock.elapsedSeconds() / 60, inFlight),
    });
    const roles: Role[] = usesJudgeModel(config, env) ? ['target', 'optimizer', 'judge'] : ['target', 'optimizer'];
    const priced = unpricedBudget(
      config.budget,
      [...models.unpriced].filter(([role]) => roles.includes(role)),
    );
    if (priced.error) throw new UserError(priced.error);
    if (priced.warning) warnings.push(priced.warning);
    // Ctrl-C: no new call is sent; the calls in flight finish and are recorded.
    const running = models;
    interrupt = () =>
      running.admission.halt(new RunStop('the run is stopping: no new model call is made', 'interrupted'));
    opts.signal?.addEventListener('abort', interrupt, { once: true });
    if (opts.signal?.aborted) throw new RunStop('interrupted before the run started', 'interrupted');
    dir.writeJson(dir.config, {
      config: redact(config, secretPaths),
      derived: {
        train_size: plan.trainSize,
        steps_per_epoch: plan.stepsPerEpoch,
        batches_per_epoch: plan.batchesPerEpoch,
        total_steps: plan.totalSteps,
        skill_update_mode: settings.mode,
        lr_control_mode: settings.lr.control,
      },
      config_file: opts.loaded.files.at(-1),
      overrides: invocation.overrides,
      files: opts.loaded.files,
    });
    const scores = new ScoreCache(dir.path('scores.jsonl'));
    closeScores = () => scores.close();
    // With `run.queue`, rollouts run on `skillopt worker` processes; everything else stays here.
    refuseOnWorkers(config, { packageFile: settings.packageSkill ? config.env.skill_init : undefined, fix: 'Run it' });
    const remote = config.run.queue
      ? await remoteRollouts({
          url: config.run.queue,
          runRoot: path.resolve(dir.root),
          loaded: opts.loaded,
          ledger: models.ledger,
          admission: models.admission,
        })
      : undefined;
    closeRemote = () => remote?.close();
    await remote?.connect();
    const rollouts = new Rollouts(
      {
        env: remote ? remote.wrap(env) : env,
        target: models.target,
        judge: models.judge,
        limit: pLimit(config.env.workers),
        cache: scores,
      },
      settings.seed,
    );
    const selectionItems = firstN(splits.val, config.evaluation.sel_env_num);
    const selectionOf = (r: Rollouts) =>
      new SelectionEvaluator(r, selectionItems, settings.gate.scoring, events, settings.gate.repeats);
    // Said once the baseline is known, before the first step pays.
    const detachCeiling = events.on((e) => {
      if (e.type !== 'stage_finished' || e.stage !== 'baseline') return;
      detachCeiling();
      const ceiling = baselineAtCeiling(settings, rollouts, selectionItems, skillInit);
      if (ceiling) events.warn(ceiling);
    });
    const packageChecks = settings.packageSkill ? new PackageChecker() : undefined;
    if (packageChecks) warnBrokenAlready(packageChecks, skillInit, events);
    const opt: OptimizerContext = {
      optimizer: models.optimizer,
      mode: settings.mode,
      env: env.name,
      maxTokens: config.model.optimizer_max_completion_tokens,
      reasoningEffort: (config.model.optimizer.reasoning_effort || config.model.reasoning_effort || undefined) as
        | ReasoningEffort
        | undefined,
      warn: (m) => events.warn(m),
    };
    const audit = buildRunAudit(config, env, splits, models.judge);
    const ctx: RunContext = {
      settings,
      dir,
      events,
      env,
      train: splits.train,
      test: firstN(splits.test, config.evaluation.test_env_num),
      ledger: models.ledger,
      admission: models.admission,
      rollouts,
      selection: selectionOf(rollouts),
      ...batchPhases(models, rollouts, { baseline: config.model.target.batch_baseline, selectionOf }),
      opt,
      analystLimit: pLimit(config.gradient.analyst_workers),
      plan,
      skillInit,
      ...(packageChecks ? { packageChecks } : {}),
      clock,
      stop: opts.signal,
      recordedConfig: redact(config, secretPaths),
      ...(audit ? { audit } : {}),
      transfer: transferHook(opts.loaded, opts.configFile, dir, opts.environment),
    };
    opts.onStart?.();
    events.emit({
      type: 'run_started',
      out_root: dir.root,
      env: env.name,
      target: models.target.id,
      optimizer: models.optimizer.id,
      ...(models.judge.id !== models.optimizer.id ? { judge: models.judge.id } : {}),
      epochs: config.train.num_epochs,
      steps_per_epoch: plan.stepsPerEpoch,
      total_steps: plan.totalSteps,
      resume_from: (dir.readRuntimeState()?.last_completed_step ?? 0) + 1,
      data: {
        train: splits.train.length,
        val: splits.val.length,
        test: splits.test.length,
        selection: ctx.selection.items.length,
        test_used: config.evaluation.eval_test ? ctx.test.length : 0,
      },
      batch_size: config.train.batch_size,
      budget: Object.entries(config.budget)
        .filter(([, v]) => typeof v === 'number' && v > 0)
        .map(([k, v]) => `${k}=${v}`),
      config_path: dir.config,
      resume_command: resume(),
    });
    started = true;
    for (const w of warnings) events.warn(w);
    const outcome = await train(ctx);
    if (outcome.status === 'stopped') {
      const raised = outcome.limit ? [`${outcome.limit.key}=${+(outcome.limit.limit * 2).toPrecision(6)}`] : [];
      const resumeCommand = resume(raised);
      events.emit({
        type: 'run_stopped',
        reason: outcome.cause,
        message: outcome.reason,
        resume_command: resumeCommand,
      });
      return { ...outcome, resumeCommand };
    }
    return outcome;
  } catch (err) {
    // The calls in flight finish (and are recorded) before anything is closed.
    await models?.admission.idle();
    const paid = models?.ledger.all().some((r) => r.from === 'provider' && !r.error) ?? false;
    discard = createdFrom !== undefined && !paid && !fs.existsSync(dir.runtimeState);
    const interrupted = (err instanceof RunStop && err.reason === 'interrupted') || (opts.signal?.aborted ?? false);
    if (!started) {
      // Nothing of this attempt was written, except a new directory, which goes.
      if (!interrupted) throw err;
      const reason = 'interrupted before the run started';
      if (!fs.existsSync(dir.config)) return { status: 'stopped', cause: 'interrupted', reason };
      say(`  [stopped: interrupted] ${reason}; ${dir.root} is as it was\n  To resume: ${resume()}`);
      return { status: 'stopped', cause: 'interrupted', reason, resumeCommand: resume() };
    }
    if (interrupted && !(err instanceof RunStop)) events.warn(`while stopping: ${errorMessage(err)}`);
    if (discard) {
      events.info(`nothing was paid for or saved yet: ${dir.root} is removed`);
      if (interrupted)
        return { status: 'stopped', cause: 'interrupted', reason: 'interrupted before anything was saved' };
      throw err;
    }
    const runtime = dir.readRuntimeState();
    if (runtime) dir.writeJson(dir.runtimeState, { ...runtime, status: interrupted ? 'stopped' : 'failed' });
    if (interrupted) {
      const reason = `interrupted: the calls that finished are saved, those still out after the grace are made again on resume; the run resumes ${runtime ? `after step ${runtime.last_completed_step}` : 'from the start'}, replaying the saved ones`;
      events.emit({ type: 'run_stopped', reason: 'interrupted', message: reason, resume_command: resume() });
      return { status: 'stopped', cause: 'interrupted', reason, resumeCommand: resume() };
    }
    // A bug of ours keeps its stack in the event log; a user's input error or a model's refusal needs none.
    const bug = err instanceof Error && !(err instanceof UserError) && !(err instanceof FatalModelError);
    events.emit({
      type: 'run_failed',
      message: errorMessage(err),
      resume_command: resume(),
      ...(bug && err.stack ? { stack: err.stack } : {}),
    });
    throw err;
  } finally {
    if (interrupt) opts.signal?.removeEventListener('abort', interrupt);
    await closeRemote();
    detach();
    closeScores();
    models?.ledger.close();
    models?.close();
    events.close();
    activity.release();
    lock.release();
    if (discard && createdFrom) removeCreated(dir.root, createdFrom);
  }
}

/** What is broken in the initial package already: said once; candidates are held only to what their edits break. */
function warnBrokenAlready(checker: PackageChecker, pkg: SkillPackage, events: EventLog): void {
  void checker.validate(pkg).then(
    (v) => {
      const failed = v.checks.filter((c) => !c.ok);
      if (failed.length)
        events.warn(
          `the initial package fails ${failed.length} check(s) already (${failed.map((c) => c.message).join('; ')}); candidates are rejected only for what their edits break`,
        );
    },
    () => {},
  );
}
