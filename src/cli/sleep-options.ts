/** The options the `skillopt sleep` commands share, and what every one of them starts from. */
import os from 'node:os';
import path from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { collect } from './common.ts';

export interface CommonOptions {
  config?: string;
  json?: boolean;
}

export interface HarvestCliOptions extends CommonOptions {
  source?: string[];
  project?: string[];
  since?: string;
  maxSessions?: number;
  out?: string;
}

export interface ModelCliOptions extends HarvestCliOptions {
  backend?: string;
  budgetTokens?: number;
  budgetUsd?: number;
  budgetMinutes?: number;
  budgetCalls?: number;
  tasks?: string;
  forceUnlock?: boolean;
}

export interface AdoptCliOptions extends CommonOptions {
  night?: string;
  skill?: string[];
  project?: string[];
  forceUnlock?: boolean;
}

export function wholeNumber(flag: string) {
  return (v: string) => {
    if (!/^\d+$/.test(v.trim())) throw new InvalidArgumentError(`${flag} expects a whole number (0 = no limit)`);
    return Number(v);
  };
}

export function amount(flag: string) {
  return (v: string) => {
    const n = Number(v);
    if (!v.trim() || !Number.isFinite(n) || n < 0)
      throw new InvalidArgumentError(`${flag} expects a number, 0 or more (0 = no limit)`);
    return n;
  };
}

export function configOption(cmd: Command): Command {
  return cmd
    .option(
      '--config <file>',
      'the Sleep config file (default: ~/.config/skillopt/sleep.yaml, or $SKILLOPT_SLEEP_CONFIG)',
    )
    .option('--json', 'print the result as JSON');
}

export function harvestOptions(cmd: Command): Command {
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

export function modelOptions(cmd: Command): Command {
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
export async function context(opts: HarvestCliOptions) {
  const { loadSleepConfig, expandHome } = await import('../sleep/config.ts');
  const { resolveHarvest } = await import('../sleep/harvest/options.ts');
  const { readState } = await import('../sleep/state/state.ts');
  const { nightProject } = await import('../sleep/night/night-options.ts');
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

export function budgetOf(opts: ModelCliOptions) {
  const b: Partial<Record<'max_tokens' | 'max_usd' | 'max_minutes' | 'max_calls', number>> = {};
  if (opts.budgetTokens !== undefined) b.max_tokens = opts.budgetTokens;
  if (opts.budgetUsd !== undefined) b.max_usd = opts.budgetUsd;
  if (opts.budgetMinutes !== undefined) b.max_minutes = opts.budgetMinutes;
  if (opts.budgetCalls !== undefined) b.max_calls = opts.budgetCalls;
  return b;
}

export const print = (text: string): void => {
  process.stdout.write(`${text}\n`);
};
