/**
 * `skillopt eval`: score one or several skills on a split, for one or several target models
 * (the transfer check), optionally several times each. Per (skill, target) cell: mean hard and
 * soft over the items, a 95% confidence interval, and a per-type breakdown; each further skill
 * is compared with the first by a paired test on the same items. Writes `eval_summary.json`
 * (its top-level `skill`, `split`, `n_items`, `hard`, `soft` are those of the first cell, as the
 * original writes them) and `eval_summary.md`, plus every rollout's results and conversations.
 * Rerunning into the same directory reuses every finished rollout.
 */
import path from 'node:path';
import pLimit from 'p-limit';
import type { LoadedConfig } from '../../config/load.ts';
import type { RoleConfig, TransferTarget } from '../../config/schema.ts';
import { acquireRunLock, type RunLock } from '../../run/lock.ts';
import { Interrupted, UserError } from '../../errors.ts';
import { canonicalSplit } from '../../envs/data/splits.ts';
import type { Env, Item, SplitName, Trajectory } from '../../envs/types.ts';
import { evalMarkdown } from './report.ts';
import { pairedTest } from '../../util/stats.ts';
import type { Cell, CellStats, Comparison, EvalSummary } from './summary.ts';
import { activationLine, activationMetrics } from '../../envs/triggers/metrics.ts';
import { perItem, round, roundTest, stats, type ItemScore } from './scores.ts';
import { ModelStack } from '../../model/stack.ts';
import { RunStop, type ChatModel } from '../../model/types.ts';
import { markActivity } from '../../run/activity.ts';
import { writeFileAtomic, writeJsonAtomic } from '../../run/atomic.ts';
import { EventLog } from '../../run/events.ts';
import { attachConsoleReporter, type ConsoleOutput } from '../../run/reporter.ts';
import { packageHash } from '../../skill/package/package.ts';
import { count } from '../../util/plural.ts';
import { firstN } from '../../engine/batches.ts';
import { rollout } from '../../engine/stages/rollout.ts';
import { createEnv, loadSplits } from '../../envs/build.ts';
import { batchedTargets, buildTargets, targetPrices, targetRoles } from './targets.ts';
import { BATCH_IN_FLIGHT } from '../../model/batch/batched-model.ts';
import { readSkills, slug } from './skills.ts';
import { refuseOnWorkers, remoteRollouts } from '../remote.ts';
import { ScoreCache } from '../../engine/scoring/score-cache.ts';
import { taskCost, taskCostLine } from '../../engine/task-cost.ts';
import { madeFor } from '../../model/attribution.ts';

export { targetRole, transferRole } from './targets.ts';
import { type EvalSeals, evalSeals, type SealedCell } from './seals.ts';

export interface EvalOptions {
  loaded: LoadedConfig;
  outRoot: string;
  configFile: string;
  /** The skill files; the first is the baseline of the comparisons. */
  skillFiles: readonly string[];
  /** train, val, test (with the original's aliases) or all. */
  split: string;
  /** Each target, as `BACKEND:MODEL` or a transfer target's object; none = the config's `model.target`. */
  targets?: readonly TransferTarget[];
  repeats?: number;
  /** Models to use instead of building them (tests); they still go through the pools, retries and ledger. */
  models?: { targets?: ChatModel[]; judge?: ChatModel };
  environment?: Record<string, string | undefined>;
  /** Where progress lines go (default stdout; null = silent); on a terminal, progress bars too. */
  out?: ConsoleOutput | null;
  /** Aborted to stop at a safe point (Ctrl-C): the calls in flight finish and are kept, no new call starts. */
  signal?: AbortSignal;
  /** The command that continues the evaluation, said when it stops (the CLI's; a rerun into `outRoot` continues it). */
  resumeCommand?: string;
  /** Take over the directory's lock from a process that cannot be checked from here (the user knows it is gone). */
  forceUnlock?: boolean;
  /** Score the test split again where another run sealed a figure (`--rescore-test`). */
  rescoreTest?: boolean;
}

/** A split name of `eval`: train, val, test (with the original's aliases) or all. */
function evalSplit(split: string): SplitName | 'all' {
  if (split.trim().toLowerCase() === 'all') return 'all';
  try {
    return canonicalSplit(split);
  } catch (err) {
    throw new UserError(`--split ${split}: ${(err as Error).message.replace(' or test (', ', test or all (')}`);
  }
}

/** The items of a split name ('all' = train, val and test in turn), capped by `evaluation.test_env_num`. */
export function evalItems(splits: { train: Item[]; val: Item[]; test: Item[] }, split: string, cap: number): Item[] {
  const name = evalSplit(split);
  return firstN(name === 'all' ? [...splits.train, ...splits.val, ...splits.test] : splits[name], cap);
}

export async function runEvaluation(opts: EvalOptions): Promise<EvalSummary> {
  const { config } = opts.loaded;
  const say = (line: string) => opts.out !== null && (opts.out ?? process.stdout).write(`${line}\n`);
  const repeats = opts.repeats ?? 1;
  if (!Number.isInteger(repeats) || repeats < 1)
    throw new UserError(`--repeats: expected a whole number of at least 1, got ${opts.repeats}`);
  // Workers build the config's target, not those of --target.
  if (config.run.queue && opts.targets?.length)
    throw new UserError(
      "--target: with run.queue the workers run the config's model.target only; evaluate other targets without run.queue",
    );
  evalSplit(opts.split);
  const skills = readSkills(opts.skillFiles);
  const packaged = skills.find((s) => s.pkg.files?.size);
  refuseOnWorkers(config, { packageFile: packaged?.file, fix: 'Evaluate it' });
  const out = path.resolve(opts.outRoot);
  const env = createEnv(opts.loaded, out);
  // Model events (calls failing and retried, options a model does not take) go to the console as in training.
  const events = new EventLog();
  // Given a stream, everything goes there, warnings too; else lines to stdout and warnings to stderr.
  const detach =
    opts.out === null
      ? () => {}
      : attachConsoleReporter(events, opts.out ?? process.stdout, opts.out ?? process.stderr);
  const stack = new ModelStack(config, {
    ledgerFile: path.join(out, 'calls.jsonl'),
    ...(opts.environment ? { environment: opts.environment } : {}),
    configDir: opts.loaded.baseDirOf('cache.path'),
    onEvent: (e) => events.emit(e),
  });
  let cache: ScoreCache | undefined;
  let remote: Awaited<ReturnType<typeof remoteRollouts>> | undefined;
  let activity: ReturnType<typeof markActivity> | undefined;
  let lock: RunLock | undefined;
  const kept = { rollouts: 0 };
  const interrupt = () =>
    stack.admission.halt(new RunStop('the evaluation is stopping: no new model call is made', 'interrupted'));
  opts.signal?.addEventListener('abort', interrupt, { once: true });
  try {
    // The models first (a missing key, an endpoint not set): a refused evaluation writes nothing,
    // not even the split of its data.
    const targets = await buildTargets(config, opts.targets, stack, opts.models?.targets);
    const judge = !env.usesJudge
      ? undefined
      : opts.models?.judge
        ? stack.wrap('judge', opts.models.judge, config.model.judge as RoleConfig)
        : await stack.batchModel('judge');
    const splits = await loadSplits(env, opts.loaded);
    for (const w of splits.warnings ?? []) say(`warning: ${w}`);
    const items = evalItems(splits, opts.split, config.evaluation.test_env_num);
    if (items.length === 0) throw new UserError(`the ${opts.split} split has no items`);
    const seals = evalSeals({
      config,
      split: opts.split,
      // Targets given ready-made (a library caller's models) are told apart by their ids.
      roles: opts.models?.targets ? targets.map((m) => ({ id: m.id })) : targetRoles(config, opts.targets),
      items,
      out,
      rescore: Boolean(opts.rescoreTest),
      types: env.taskTypes?.() ?? [],
    });
    seals?.refuseSealed(skills);
    // One evaluation a directory: a second one there would score every item again into the same files.
    lock = acquireRunLock(out, {
      what: `evaluation directory ${out}`,
      otherwise: 'give this one another --out',
      forceUnlock: opts.forceUnlock,
    });
    cache = new ScoreCache(path.join(out, 'scores.jsonl'));
    // With `run.queue`, rollouts run on `skillopt worker` processes.
    remote = config.run.queue
      ? await remoteRollouts({
          url: config.run.queue,
          runRoot: out,
          loaded: opts.loaded,
          ledger: stack.ledger,
          admission: stack.admission,
        })
      : undefined;
    // A Sleep night started while this evaluation runs waits for another night.
    activity = markActivity('eval', out, (m) => say(`warning: ${m}`));
    await remote?.connect();
    if (opts.signal?.aborted) interrupt();
    return await evaluateAll({
      opts,
      env: remote ? remote.wrap(env) : env,
      targets,
      judge,
      items,
      skills,
      repeats,
      out,
      stack,
      cache,
      events,
      kept,
      say,
      seals,
    });
  } catch (err) {
    const interrupted = (err instanceof RunStop && err.reason === 'interrupted') || opts.signal?.aborted;
    if (!interrupted) throw err;
    // The calls in flight finish (and are recorded) before anything is closed.
    await stack.admission.idle();
    say(
      `  [stopped: interrupted] the calls in flight finished; ${count(kept.rollouts, 'rollout')} finished and are kept in ${out}, where a rerun takes them up`,
    );
    if (opts.resumeCommand) say(`  To continue: ${opts.resumeCommand}`);
    throw new Interrupted('');
  } finally {
    opts.signal?.removeEventListener('abort', interrupt);
    activity?.release();
    await remote?.close();
    detach();
    cache?.close();
    stack.close();
    lock?.release();
  }
}

interface EvalRun {
  opts: EvalOptions;
  env: Env;
  targets: ChatModel[];
  judge: ChatModel | undefined;
  items: Item[];
  skills: ReturnType<typeof readSkills>;
  repeats: number;
  out: string;
  stack: ModelStack;
  cache: ScoreCache;
  events: EventLog;
  /** Rollouts finished so far (cached ones included), for the message of a stop. */
  kept: { rollouts: number };
  say: (line: string) => void;
  seals: EvalSeals | undefined;
}

async function evaluateAll({
  opts,
  env,
  targets,
  judge,
  items,
  skills,
  repeats,
  out,
  stack,
  cache,
  events,
  kept,
  say,
  seals,
}: EvalRun): Promise<EvalSummary> {
  const { config } = opts.loaded;
  // Batched targets get every rollout at once, so that one batch holds them all.
  const batched = batchedTargets(config, opts.targets) || Boolean(config.model.judge.batch);
  const limit = pLimit(batched ? BATCH_IN_FLIGHT : config.env.workers);
  say(
    `eval: env=${env.name} split=${opts.split} items=${items.length} skills=${skills.length} targets=${targets.map((t) => t.id).join(', ')} repeats=${repeats}`,
  );

  /** A cell's repeats, each rollout tagged so that the cell's own calls (their latencies) can be told apart in the ledger. */
  const runCell = async (target: ChatModel, skill: (typeof skills)[number], cellNumber: number) => {
    const runs: (Trajectory | undefined)[][] = [];
    const dirs: string[] = [];
    const one = (r: number) => {
      const dir = path.join(out, 'rollouts', slug(target.id), skill.label, `repeat_${String(r).padStart(2, '0')}`);
      const label = `${skill.label} on ${target.id}${repeats > 1 ? ` (repeat ${r + 1} of ${repeats})` : ''}`;
      dirs[r] = path.relative(out, dir);
      return madeFor(`eval cell ${cellNumber}`, () =>
        rollout({
          env,
          target,
          judge,
          skill: skill.pkg,
          items,
          limit,
          cache,
          seed: config.train.seed + r,
          sample: r,
          dir,
          onResult: () => kept.rollouts++,
          onProgress: (done, total) =>
            events.emit({ type: 'stage_progress', step: cellNumber, stage: 'evaluate', done, total, label }),
        }),
      );
    };
    // A figure another run sealed is shown, not drawn again.
    const sealed = seals?.shown(targets.indexOf(target), skill.pkg);
    if (sealed) return { runs: [sealed.trajectories], dirs: [], sealed };
    const repeatsOf = Array.from({ length: repeats }, (_, r) => r);
    if (batched) runs.push(...(await Promise.all(repeatsOf.map(one))).map((r) => r.trajectories));
    else for (const r of repeatsOf) runs.push((await one(r)).trajectories);
    return { runs, dirs, sealed: undefined as SealedCell | undefined };
  };
  const cellsOf = targets.flatMap((target, t) =>
    skills.map((skill, k) => ({ t, target, skill, number: t * skills.length + k + 1 })),
  );
  // Started together when batched (a failure is read where its cell is awaited), else one after another.
  const started = batched ? cellsOf.map((c) => runCell(c.target, c.skill, c.number)) : [];
  for (const p of started) p.catch(() => {});

  const cells: Cell[] = [];
  const itemScores = new Map<string, ItemScore[]>();
  const types = env.taskTypes?.() ?? [];
  const prices = targetPrices(config, opts.targets);
  for (const { t, target, skill, number: cellNumber } of cellsOf) {
    say(
      `  ${skill.label} on ${target.id}: ${count(items.length, 'item')}${repeats > 1 ? ` x ${repeats} repeats` : ''}`,
    );
    const { runs, dirs, sealed } = await (started[cellNumber - 1] ?? runCell(target, skill, cellNumber));
    if (sealed) say(`  ${skill.label} on ${target.id}: ${sealed.note}`);
    const { scores, errors } = perItem(items, runs);
    if (scores.length === 0) {
      const first = runs.flat().find((t) => t?.error)?.error;
      throw new Error(
        `every rollout of ${skill.label} on ${target.id} failed (${first?.kind}: ${first?.message}); no score can be given. Check the target model and its endpoint, then run the same command again: finished rollouts are kept`,
      );
    }
    itemScores.set(`${target.id}\u0000${skill.label}`, scores);
    const byType: Record<string, CellStats> = {};
    for (const type of [...new Set([...types, ...scores.map((s) => s.type)])].sort()) {
      const of = scores.filter((s) => s.type === type);
      if (of.length) byType[type] = stats(of);
    }
    const repeatHard = runs.map((run) => {
      const ok = run.filter((t): t is Trajectory => Boolean(t && !t.error));
      return ok.length ? round(ok.reduce((a, t) => a + t.hard, 0) / ok.length) : 0;
    });
    const activation = activationMetrics(runs.flat().filter((t): t is Trajectory => Boolean(t)));
    const cell: Cell = {
      skill: skill.file,
      skill_label: skill.label,
      skill_hash: packageHash(skill.pkg),
      ...(sealed ? { sealed: { by: sealed.by, at: sealed.at } } : {}),
      target: target.id,
      n_items: scores.length,
      errors,
      ...stats(scores),
      repeat_hard: repeatHard,
      by_type: byType,
      rollout_dirs: dirs,
      ...(activation ? { activation } : {}),
    };
    const latencies = stack.ledger
      .all()
      .filter((c) => c.work === `eval cell ${cellNumber}` && c.from === 'provider' && c.role === 'target' && !c.batch)
      .map((c) => c.latency_ms);
    const perTask = sealed
      ? (sealed.cost as Cell['per_task'])
      : taskCost(runs.flat(), prices.length === targets.length ? prices[t] : undefined, latencies);
    if (perTask) cell.per_task = perTask;
    cells.push(cell);
    say(
      `  ${skill.label} on ${target.id}: Results: hard=${cell.hard.toFixed(4)} soft=${cell.soft.toFixed(4)}  (n=${cell.n_items}${errors ? `, ${errors} not scored: infrastructure errors` : ''})`,
    );
    if (activation) say(`  ${skill.label} on ${target.id}: activation: ${activationLine(activation)}`);
    if (perTask) say(`  ${skill.label} on ${target.id}: per task: ${taskCostLine(perTask)}`);
    const recorded = sealed ? undefined : seals?.record(t, skill.pkg, runs[0]!, perTask);
    if (recorded) say(`  ${skill.label} on ${target.id}: ${recorded}`);
  }

  const comparisons: Comparison[] = [];
  for (const target of targets) {
    const base = itemScores.get(`${target.id}\u0000${skills[0]!.label}`)!;
    for (const skill of skills.slice(1)) {
      const cand = new Map(itemScores.get(`${target.id}\u0000${skill.label}`)!.map((s) => [s.id, s]));
      const pairs = base.filter((b) => cand.has(b.id)).map((b) => [b, cand.get(b.id)!] as const);
      comparisons.push({
        target: target.id,
        baseline: skills[0]!.label,
        candidate: skill.label,
        hard: roundTest(
          pairedTest(
            pairs.map(([b]) => b.hard),
            pairs.map(([, c]) => c.hard),
          ),
        ),
        soft: roundTest(
          pairedTest(
            pairs.map(([b]) => b.soft),
            pairs.map(([, c]) => c.soft),
          ),
        ),
      });
    }
  }

  const first = cells[0]!;
  const summary: EvalSummary = {
    skill: first.skill,
    split: opts.split,
    n_items: first.n_items,
    hard: first.hard,
    soft: first.soft,
    target: first.target,
    repeats,
    items: items.length,
    cells,
    comparisons,
    usage: stack.ledger.byPurpose(),
  };
  writeJsonAtomic(path.join(out, 'eval_summary.json'), summary);
  const markdown = evalMarkdown(summary, env.name);
  writeFileAtomic(path.join(out, 'eval_summary.md'), markdown);
  say(`\n${markdown}`);
  say(`eval summary written to ${path.join(out, 'eval_summary.json')}`);
  return summary;
}
