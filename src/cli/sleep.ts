/** `skillopt sleep …`: learn from the user's own agent sessions. */
import os from 'node:os';
import path from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { collect } from './common.ts';
import { registerSleepSchedule } from './sleep-schedule.ts';
import { registerSleepInstall } from './sleep-install.ts';

interface HarvestCliOptions {
  source?: string[];
  project?: string[];
  since?: string;
  maxSessions?: number;
  config?: string;
  out?: string;
  json?: boolean;
}

function wholeNumber(flag: string) {
  return (v: string) => {
    if (!/^\d+$/.test(v.trim())) throw new InvalidArgumentError(`${flag} expects a whole number (0 = no limit)`);
    return Number(v);
  };
}

function harvestOptions(cmd: Command): Command {
  return cmd
    .option('--source <names>', 'agents to read: claude, codex, copilot (VS Code), copilot_cli, cursor, opencode, pi, devin, or all (repeatable, or comma-separated; default: the config, else all)', collect)
    .option('--project <dir>', 'sessions of this project folder and what is inside it (repeatable), or all (default: the git root of the working directory)', collect)
    .option('--since <when>', 'sessions active since: a duration back from now (72h, 7d) or a date (2026-11-01); default: harvest.lookback_hours of the config (72h)')
    .addOption(new Option('--max-sessions <n>', 'keep at most this many sessions, the newest (0 = no limit; default 120)').argParser(wholeNumber('--max-sessions')))
    .option('--config <file>', 'the Sleep config file (default: ~/.config/skillopt/sleep.yaml, or $SKILLOPT_SLEEP_CONFIG)')
    .option('--json', 'print the report as JSON');
}

async function runHarvest(opts: HarvestCliOptions, write: boolean): Promise<void> {
  const { loadSleepConfig, expandHome } = await import('../sleep/config.ts');
  const { resolveHarvest } = await import('../sleep/harvest/options.ts');
  const { harvest } = await import('../sleep/harvest/harvest.ts');
  const { formatHarvest, tilde } = await import('../sleep/harvest/report.ts');
  const { describeScope } = await import('../sleep/harvest/scope.ts');
  const loaded = loadSleepConfig(opts.config);
  const resolved = resolveHarvest(loaded.config, { source: opts.source, project: opts.project, since: opts.since, maxSessions: opts.maxSessions });
  const result = harvest(resolved);
  let output: string | undefined;
  if (write) {
    const { writeDigests } = await import('../sleep/harvest/digests-file.ts');
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    const stateDir = path.resolve(expandHome(loaded.config.state_dir || path.join(os.homedir(), '.skillopt-sleep')));
    output = path.resolve(opts.out ?? path.join(stateDir, 'harvests', `${stamp}.jsonl`));
    writeDigests(output, result.digests);
  }
  if (opts.json) {
    const report = { window: { since: resolved.since === undefined ? null : new Date(resolved.since).toISOString(), text: resolved.windowText }, scope: describeScope(resolved.scope), sessions: result.digests.length, sources: result.sources, ...(output ? { output } : {}) };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  const head = write ? 'Harvest' : 'Dry run: what Sleep would harvest (nothing is written, no model is called)';
  process.stdout.write(`${head}\n  window: ${resolved.windowText}\n  projects: ${describeScope(resolved.scope)}\n${formatHarvest(result)}\n`);
  if (output) process.stdout.write(`wrote ${result.digests.length} session digests (secrets redacted) to ${tilde(output)}\n`);
  else process.stdout.write(`${result.digests.length} sessions would be harvested\n`);
}

export function registerSleep(program: Command): void {
  const sleep = program.command('sleep').description("Learn from your own agent sessions: harvest your transcripts (read-only, secrets redacted)");
  harvestOptions(sleep.command('harvest').description('Read your agents\' sessions (read-only) and write their redacted digests to a harvest file'))
    .option('-o, --out <file>', 'where to write the digests (JSON Lines; default: ~/.skillopt-sleep/harvests/<time>.jsonl)')
    .action((opts: HarvestCliOptions) => runHarvest(opts, true));
  registerSleepSchedule(sleep);
  registerSleepInstall(sleep);
  harvestOptions(sleep.command('dry-run').description('Show what a harvest would read: per agent, the sessions, their size, time span and projects; writes nothing').action((opts: HarvestCliOptions) => runHarvest(opts, false)));
}
