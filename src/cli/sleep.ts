/** `skillopt sleep …`: learn from the user's own agent sessions, and change nothing without consent. */
import os from 'node:os';
import path from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { CommandExit } from '../errors.ts';
import { collect } from './common.ts';
import { registerSleepSchedule } from './sleep-schedule.ts';
import { registerSleepInstall } from './sleep-install.ts';

interface CommonOptions {
  config?: string;
  json?: boolean;
}

interface HarvestCliOptions extends CommonOptions {
  source?: string[];
  project?: string[];
  since?: string;
  maxSessions?: number;
  out?: string;
}

interface ModelCliOptions extends HarvestCliOptions {
  backend?: string;
  budgetTokens?: number;
  budgetUsd?: number;
  budgetMinutes?: number;
  budgetCalls?: number;
  tasks?: string;
  forceUnlock?: boolean;
}

interface AdoptCliOptions extends CommonOptions {
  night?: string;
  skill?: string[];
  project?: string[];
  forceUnlock?: boolean;
}

/** Exit code of a handoff night whose prompts wait for answers (the original's). */
export const EXIT_HANDOFF_PENDING = 3;

function wholeNumber(flag: string) {
  return (v: string) => {
    if (!/^\d+$/.test(v.trim())) throw new InvalidArgumentError(`${flag} expects a whole number (0 = no limit)`);
    return Number(v);
  };
}

function amount(flag: string) {
  return (v: string) => {
    const n = Number(v);
    if (!v.trim() || !Number.isFinite(n) || n < 0)
      throw new InvalidArgumentError(`${flag} expects a number, 0 or more (0 = no limit)`);
    return n;
  };
}

function configOption(cmd: Command): Command {
  return cmd
    .option(
      '--config <file>',
      'the Sleep config file (default: ~/.config/skillopt/sleep.yaml, or $SKILLOPT_SLEEP_CONFIG)',
    )
    .option('--json', 'print the result as JSON');
}

function harvestOptions(cmd: Command): Command {
  return configOption(
    cmd
      .option(
        '--source <names>',
        'agents to read: claude, codex, copilot (VS Code), copilot_cli, cursor, opencode, pi, devin, or all (repeatable, or comma-separated; default: the config, else all)',
        collect,
      )
      .option(
        '--project <dir>',
        'sessions of this project folder and what is inside it (repeatable), or all (default: the git root of the working directory)',
        collect,
      )
      .option(
        '--since <when>',
        "sessions active since: a duration back from now (72h, 7d) or a date (2026-11-01); default: where the project's last night ended, else harvest.lookback_hours (72h)",
      )
      .addOption(
        new Option(
          '--max-sessions <n>',
          'keep at most this many sessions, the newest (0 = no limit; default 120)',
        ).argParser(wholeNumber('--max-sessions')),
      ),
  );
}

function modelOptions(cmd: Command): Command {
  return harvestOptions(cmd)
    .option(
      '--backend <name>',
      'the models: handoff (no key: you answer the prompts), sim (offline simulator), or a backend (openai_chat, anthropic, openai_compatible, …), optionally NAME:MODEL; default: model.* of the config',
    )
    .addOption(
      new Option(
        '--budget-tokens <n>',
        'stop the night at this many tokens (default: budget.max_tokens, 400000; 0 = no limit)',
      ).argParser(wholeNumber('--budget-tokens')),
    )
    .addOption(
      new Option('--budget-usd <x>', 'stop the night at this many US dollars (budget.max_usd; 0 = no limit)').argParser(
        amount('--budget-usd'),
      ),
    )
    .addOption(
      new Option(
        '--budget-minutes <m>',
        'stop the night after this many minutes (budget.max_minutes; 0 = no limit)',
      ).argParser(amount('--budget-minutes')),
    )
    .addOption(
      new Option(
        '--budget-calls <n>',
        'stop the night after this many model calls (budget.max_calls; 0 = no limit)',
      ).argParser(wholeNumber('--budget-calls')),
    );
}

/** What every Sleep command starts from: the config, the state folder, the harvest settings (the window from the last night). */
async function context(opts: HarvestCliOptions) {
  const { loadSleepConfig, expandHome } = await import('../sleep/config.ts');
  const { resolveHarvest } = await import('../sleep/harvest/options.ts');
  const { readState } = await import('../sleep/state/state.ts');
  const { nightProject } = await import('../sleep/night/night.ts');
  const loaded = loadSleepConfig(opts.config);
  const stateDir = path.resolve(expandHome(loaded.config.state_dir || path.join(os.homedir(), '.skillopt-sleep')));
  const resolved = resolveHarvest(loaded.config, {
    source: opts.source,
    project: opts.project,
    since: opts.since,
    maxSessions: opts.maxSessions,
  });
  const project = nightProject(resolved);
  const last = opts.since === undefined ? readState(stateDir).last_harvest[project] : undefined;
  if (last) {
    resolved.since = Date.parse(last);
    resolved.windowText = `since ${last.slice(0, 16).replace('T', ' ')} UTC (where the last night ended)`;
  }
  return { loaded, stateDir, resolved, project };
}

function budgetOf(opts: ModelCliOptions) {
  const b: Partial<Record<'max_tokens' | 'max_usd' | 'max_minutes' | 'max_calls', number>> = {};
  if (opts.budgetTokens !== undefined) b.max_tokens = opts.budgetTokens;
  if (opts.budgetUsd !== undefined) b.max_usd = opts.budgetUsd;
  if (opts.budgetMinutes !== undefined) b.max_minutes = opts.budgetMinutes;
  if (opts.budgetCalls !== undefined) b.max_calls = opts.budgetCalls;
  return b;
}

const print = (text: string): void => {
  process.stdout.write(`${text}\n`);
};

async function runHarvest(opts: HarvestCliOptions): Promise<void> {
  const { harvest } = await import('../sleep/harvest/harvest.ts');
  const { formatHarvest, tilde } = await import('../sleep/harvest/report.ts');
  const { describeScope } = await import('../sleep/harvest/scope.ts');
  const { writeDigests } = await import('../sleep/harvest/digests-file.ts');
  const { stamp } = await import('../sleep/staging/staging.ts');
  const { stateDir, resolved } = await context(opts);
  const result = harvest(resolved);
  const output = path.resolve(opts.out ?? path.join(stateDir, 'harvests', `${stamp()}.jsonl`));
  writeDigests(output, result.digests);
  if (opts.json) {
    print(
      JSON.stringify(
        {
          window: {
            since: resolved.since === undefined ? null : new Date(resolved.since).toISOString(),
            text: resolved.windowText,
          },
          scope: describeScope(resolved.scope),
          sessions: result.digests.length,
          sources: result.sources,
          output,
        },
        null,
        2,
      ),
    );
    return;
  }
  print(
    `Harvest\n  window: ${resolved.windowText}\n  projects: ${describeScope(resolved.scope)}\n${formatHarvest(result)}`,
  );
  print(`wrote ${result.digests.length} session digests (secrets redacted) to ${tilde(output)}`);
}

async function runDryRun(opts: ModelCliOptions): Promise<void> {
  const { harvest } = await import('../sleep/harvest/harvest.ts');
  const { formatHarvest, tilde } = await import('../sleep/harvest/report.ts');
  const { describeScope } = await import('../sleep/harvest/scope.ts');
  const { mine } = await import('../sleep/mine/mine.ts');
  const { chooseModels } = await import('../sleep/night/models.ts');
  const { planNight, formatNightPlan } = await import('../sleep/night/plan.ts');
  const { managedSkillName, managedSkillPath, readDocument } = await import('../sleep/documents/documents.ts');
  const { countTokens } = await import('../skill/document.ts');
  const { safeLine } = await import('../sleep/staging/report.ts');
  const { loaded, resolved, project } = await context(opts);
  const c = loaded.config;
  const choice = chooseModels(loaded, opts.backend, budgetOf(opts));
  const result = harvest(resolved);
  const skillPath = managedSkillPath(c, resolved.locations.claudeHome, project || process.cwd());
  const documents = [readDocument(skillPath, 'skill', managedSkillName(skillPath))];
  if (c.documents.memory !== 'none' && project)
    documents.push(readDocument(path.join(project, c.documents.memory), 'memory', c.documents.memory));
  const managed = documents[0]!;
  const { tasks } = await mine(result.digests, {
    maxTasks: c.mine.max_tasks,
    val: c.mine.val_fraction,
    test: c.mine.test_fraction,
    seed: c.mine.seed,
    target: c.mine.target_filter && managed.exists ? { text: managed.text, path: managed.path } : undefined,
  });
  const plan = planNight({
    config: c,
    choice,
    digests: result.digests,
    tasks,
    documentTokens: documents.map((d) => countTokens(d.working)),
  });
  if (opts.json) {
    print(
      JSON.stringify(
        {
          window: {
            since: resolved.since === undefined ? null : new Date(resolved.since).toISOString(),
            text: resolved.windowText,
          },
          scope: describeScope(resolved.scope),
          sessions: result.digests.length,
          sources: result.sources,
          models: choice.describe,
          documents: documents.map((d) => ({ name: d.name, kind: d.kind, path: d.path, exists: d.exists })),
          tasks: tasks.map((t) => ({
            id: t.id,
            split: t.split,
            outcome: t.outcome,
            intent: t.intent,
            skill_hint: t.skill_hint,
          })),
          plan,
        },
        null,
        2,
      ),
    );
    return;
  }
  const lines = [
    'Dry run: what Sleep would harvest and learn (nothing is written, no model is called)',
    `  window: ${resolved.windowText}`,
    `  projects: ${describeScope(resolved.scope)}`,
    formatHarvest(result),
    `${result.digests.length} sessions would be harvested`,
    '',
    `Documents a night would train (models: ${choice.describe}):`,
    ...documents.map(
      (d) => `  ${d.kind} ${d.name}: ${tilde(d.path)}${d.exists ? '' : ' (does not exist yet: a night proposes it)'}`,
    ),
    '',
    tasks.length
      ? `Tasks it would learn from (${tasks.length}; mined without a model here${c.mine.miner === 'model' ? ': a night lets the model rewrite them with rubrics and checks' : ''}):`
      : 'No task: no session in the window has a request to learn from.',
    ...tasks.slice(0, 20).map((t) => `  [${t.split}/${t.outcome}] ${safeLine(t.intent, 100)}`),
    ...(tasks.length > 20 ? [`  … and ${tasks.length - 20} more`] : []),
    '',
    formatNightPlan(plan),
  ];
  print(lines.join('\n'));
}

async function runMine(opts: ModelCliOptions): Promise<void> {
  const { harvest } = await import('../sleep/harvest/harvest.ts');
  const { tilde } = await import('../sleep/harvest/report.ts');
  const { mine } = await import('../sleep/mine/mine.ts');
  const { chooseModels, buildNightModels } = await import('../sleep/night/models.ts');
  const { writeTasksFile } = await import('../sleep/tasks/tasks-file.ts');
  const { stamp } = await import('../sleep/staging/staging.ts');
  const { managedSkillPath } = await import('../sleep/documents/documents.ts');
  const { loaded, stateDir, resolved, project } = await context(opts);
  const c = loaded.config;
  const choice = chooseModels(loaded, opts.backend, budgetOf(opts));
  if (choice.handoff)
    throw new CommandExit(
      2,
      'mine with --backend handoff: a night with the handoff asks for the mining prompts itself (skillopt sleep run --backend handoff)',
    );
  const result = harvest(resolved);
  const started = Date.now();
  const models =
    choice.chosen && c.mine.miner === 'model'
      ? await buildNightModels(choice, {
          elapsedMinutes: () => (Date.now() - started) / 60_000,
          warn: (m) => process.stderr.write(`warning: ${m}\n`),
        })
      : undefined;
  try {
    const mined = await mine(result.digests, {
      maxTasks: c.mine.max_tasks,
      val: c.mine.val_fraction,
      test: c.mine.test_fraction,
      seed: c.mine.seed,
      model: models ? { ctx: models.opt, maxSessions: c.mine.max_tasks * 3 } : undefined,
    });
    const out = path.resolve(opts.out ?? path.join(stateDir, 'tasks', `${stamp()}.json`));
    writeTasksFile(out, {
      project,
      transcript_source: mined.miner,
      n_sessions: result.digests.length,
      target_skill_path: managedSkillPath(c, resolved.locations.claudeHome, project || process.cwd()),
      reviewed: false,
      tasks: mined.tasks,
    });
    if (opts.json)
      return print(
        JSON.stringify(
          { output: out, sessions: result.digests.length, miner: mined.miner, tasks: mined.tasks.length },
          null,
          2,
        ),
      );
    print(
      `mined ${mined.tasks.length} tasks from ${result.digests.length} sessions (${mined.miner === 'model' ? 'by the model' : 'without a model'}) into ${tilde(out)}`,
    );
    print(
      `Review them (remove what must not go to a model, fix references, add checks), set "reviewed": true, then: skillopt sleep run --tasks ${tilde(out)}`,
    );
  } finally {
    models?.close();
  }
}

async function runRun(opts: ModelCliOptions): Promise<void> {
  const { runNight } = await import('../sleep/night/night.ts');
  const { tilde } = await import('../sleep/harvest/report.ts');
  const { loaded, stateDir, resolved } = await context(opts);
  const say = (line: string) => !opts.json && process.stderr.write(`${line}\n`);
  const rerun = ['skillopt sleep run', ...process.argv.slice(process.argv.indexOf('run') + 1)].join(' ');
  const outcome = await runNight({
    loaded,
    harvest: resolved,
    sinceGiven: opts.since !== undefined,
    stateDir,
    backend: opts.backend,
    budget: budgetOf(opts),
    tasksFile: opts.tasks,
    rerun,
    say,
    warn: (m) => process.stderr.write(`warning: ${m}\n`),
    forceUnlock: opts.forceUnlock,
  });
  if (opts.json)
    print(
      JSON.stringify(
        outcome.status === 'staged' ? { status: outcome.status, dir: outcome.dir, report: outcome.report } : outcome,
        null,
        2,
      ),
    );
  switch (outcome.status) {
    case 'staged': {
      if (opts.json) return;
      const staged = outcome.report.documents.filter((d) => d.staged);
      print(`night ${outcome.report.night} staged in ${tilde(outcome.dir)}`);
      for (const d of outcome.report.documents)
        print(
          `  ${d.kind} ${d.document}: ${d.action}${d.baseline && d.candidate ? ` (val ${d.baseline.gate.toFixed(3)} → ${d.candidate.gate.toFixed(3)})` : ''}${d.staged ? ', waiting for adoption' : ''}`,
        );
      print(`report: ${tilde(path.join(outcome.dir, 'report.md'))}`);
      print(
        staged.length
          ? 'Nothing live has changed. Review diff.patch there, then: skillopt sleep adopt'
          : 'Nothing to adopt tonight; nothing live has changed.',
      );
      return;
    }
    case 'no_tasks':
      if (!opts.json) print(`no task to learn from in ${outcome.sessions} session(s); nothing staged`);
      return;
    case 'handoff_pending':
      if (!opts.json)
        print(
          `${outcome.prompts} prompt(s) wait for answers: read ${tilde(outcome.file)}, write each answer to answers/<id>.md beside it, then run the same command again`,
        );
      throw new CommandExit(EXIT_HANDOFF_PENDING);
    case 'skipped':
      if (!opts.json) print(`night skipped, the machine is busy: ${outcome.reason}`);
      return;
    case 'stopped':
      throw new CommandExit(
        1,
        `${outcome.message} Nothing was staged, and the next night harvests the same sessions again.`,
      );
  }
}

async function runStatus(opts: AdoptCliOptions): Promise<void> {
  const { statusOf, formatStatus } = await import('../sleep/state/status.ts');
  const { stateDir, project } = await context({ config: opts.config, project: opts.project });
  const handoffRoot = path.join(stateDir, 'handoff');
  const fs = await import('node:fs');
  const handoffs = fs.existsSync(handoffRoot) ? fs.readdirSync(handoffRoot).map((d) => path.join(handoffRoot, d)) : [];
  const view = statusOf(stateDir, project, handoffs);
  print(opts.json ? JSON.stringify(view, null, 2) : formatStatus(view));
}

async function runHistory(opts: CommonOptions & { limit?: number }): Promise<void> {
  const { readState } = await import('../sleep/state/state.ts');
  const { historyRows } = await import('../sleep/state/status.ts');
  const { stateDir } = await context({ config: opts.config });
  const history = readState(stateDir).history.slice(-(opts.limit || 1000));
  if (opts.json) return print(JSON.stringify(history, null, 2));
  print(history.length ? historyRows(history).join('\n') : 'no night yet');
}

async function nightFor(opts: AdoptCliOptions, stateDir: string, project: string): Promise<string> {
  const { nightDirOf, stagedNights } = await import('../sleep/staging/staging.ts');
  const { UserError } = await import('../errors.ts');
  if (opts.night) return nightDirOf(stateDir, opts.night);
  const [latest] = stagedNights(stateDir, project);
  if (!latest)
    throw new UserError(
      `no staged night for ${project || 'every project'} in ${stateDir}: run \`skillopt sleep run\` first (or name one with --night)`,
    );
  return latest.dir;
}

async function runAdopt(opts: AdoptCliOptions): Promise<void> {
  const { adopt } = await import('../sleep/adoption/adopt.ts');
  const { tilde } = await import('../sleep/harvest/report.ts');
  const { stateDir, project } = await context({ config: opts.config, project: opts.project });
  const night = await nightFor(opts, stateDir, project);
  const result = adopt(stateDir, night, opts.skill, { forceUnlock: opts.forceUnlock });
  if (opts.json) return print(JSON.stringify({ ok: true, ...result }, null, 2));
  for (const a of result.adopted)
    print(`adopted ${a.name}: ${tilde(a.live_path)}${a.backup ? ` (backup: ${tilde(a.backup)})` : ' (new file)'}`);
  print('undo with: skillopt sleep rollback');
}

async function runRollback(opts: AdoptCliOptions): Promise<void> {
  const { rollback } = await import('../sleep/adoption/adopt.ts');
  const { nightDirOf } = await import('../sleep/staging/staging.ts');
  const { tilde } = await import('../sleep/harvest/report.ts');
  const { stateDir } = await context({ config: opts.config });
  const result = rollback(stateDir, opts.night ? nightDirOf(stateDir, opts.night) : undefined, {
    forceUnlock: opts.forceUnlock,
  });
  if (opts.json) return print(JSON.stringify({ ok: true, ...result }, null, 2));
  for (const r of result.restored)
    print(
      `${r.removed ? 'removed' : 'restored'} ${r.name}: ${tilde(r.live_path)}${r.removed ? ' (the adoption had created it)' : ' (as it was before the adoption)'}`,
    );
}

export function registerSleep(program: Command): void {
  const sleep = program
    .command('sleep')
    .description(
      'Learn from your own agent sessions overnight: harvest, mine, replay, consolidate and stage skill edits; nothing live changes until you adopt them',
    );
  modelOptions(
    sleep
      .command('dry-run')
      .description(
        'Show what a night would harvest, the tasks it would learn from and what it would cost; calls no model, writes nothing',
      ),
  ).action(runDryRun);
  modelOptions(
    sleep
      .command('run')
      .description(
        'Run one night: harvest, mine, replay, consolidate, gate, and stage the proposals (nothing live changes)',
      ),
  )
    .option('--tasks <file>', 'train on a reviewed tasks file (from `skillopt sleep mine`) instead of harvesting')
    .option(
      '--force-unlock',
      'take over the lock of a night whose process cannot be checked (another host or container) when you know it is gone',
    )
    .action(runRun);
  harvestOptions(
    sleep
      .command('harvest')
      .description("Read your agents' sessions (read-only) and write their redacted digests to a harvest file"),
  )
    .option(
      '-o, --out <file>',
      'where to write the digests (JSON Lines; default: ~/.skillopt-sleep/harvests/<time>.jsonl)',
    )
    .action(runHarvest);
  registerSleepSchedule(sleep);
  registerSleepInstall(sleep);
  modelOptions(
    sleep
      .command('mine')
      .description(
        'Harvest and mine the tasks into a tasks file for you to review, edit and feed back with `run --tasks`',
      ),
  )
    .option('-o, --out <file>', 'where to write the tasks (default: ~/.skillopt-sleep/tasks/<time>.json)')
    .action(runMine);
  configOption(sleep.command('status').description('The last nights, what waits for adoption, what was adopted'))
    .option('--project <dir>', 'the project (default: the git root of the working directory)', collect)
    .action(runStatus);
  configOption(
    sleep.command('adopt').description("Apply a staged night's proposals to your files (backed up, all or nothing)"),
  )
    .option(
      '--night <dir>',
      'the night (its folder, or its name under ~/.skillopt-sleep/nights; default: the latest staged for the project)',
    )
    .option('--skill <name>', 'adopt only this document (repeatable; default: every staged one)', collect)
    .option(
      '--project <dir>',
      'the project whose latest night to adopt (default: the git root of the working directory)',
      collect,
    )
    .option(
      '--force-unlock',
      'take over the adoption lock of a process that cannot be checked when you know it is gone',
    )
    .action(runAdopt);
  configOption(
    sleep.command('rollback').description('Put the files of the latest adoption back as they were, byte for byte'),
  )
    .option('--night <dir>', 'roll back the latest adoption of this night (default: the latest adoption of all)')
    .option(
      '--force-unlock',
      'take over the adoption lock of a process that cannot be checked when you know it is gone',
    )
    .action(runRollback);
  configOption(sleep.command('history').description('Every night so far'))
    .addOption(new Option('--limit <n>', 'the last N nights').argParser(wholeNumber('--limit')))
    .action(runHistory);
}
