/** `skillopt sleep schedule` / `unschedule`: the nightly job on the system's scheduler. */
import os from 'node:os';
import path from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';

interface ScheduleFlags {
  hour: number;
  minute: number;
  project?: string;
  scheduler?: string;
  config?: string;
}

function range(flag: string, max: number) {
  return (v: string) => {
    if (!/^\d+$/.test(v.trim()) || Number(v) > max)
      throw new InvalidArgumentError(`${flag} expects a whole number from 0 to ${max}`);
    return Number(v);
  };
}

/** The system commands and folders, replaced by stand-ins through the environment (tests). */
export function schedulerSystem(environment: NodeJS.ProcessEnv = process.env) {
  const e = (k: string) => environment[k] || undefined;
  return {
    crontab: e('SKILLOPT_CRONTAB'),
    systemctl: e('SKILLOPT_SYSTEMCTL'),
    unitDir: e('SKILLOPT_SYSTEMD_UNIT_DIR'),
    launchctl: e('SKILLOPT_LAUNCHCTL'),
    agentDir: e('SKILLOPT_LAUNCH_AGENT_DIR'),
  };
}

export async function sleepStateDir(configFile?: string): Promise<string> {
  const { loadSleepConfig, expandHome } = await import('../sleep/config.ts');
  const { config } = loadSleepConfig(configFile);
  return path.resolve(expandHome(config.state_dir || path.join(os.homedir(), '.skillopt-sleep')));
}

export function registerSleepSchedule(sleep: Command): void {
  sleep
    .command('schedule')
    .description(
      'Run Sleep every night for this project: a crontab line or a systemd user timer (Linux), a launchd agent (macOS); on Windows, prints the schtasks command',
    )
    .addOption(new Option('--hour <h>', 'hour of the night, 0-23').default(3).argParser(range('--hour', 23)))
    .addOption(new Option('--minute <m>', 'minute, 0-59').default(17).argParser(range('--minute', 59)))
    .option('--project <dir>', 'the project (default: the working directory)')
    .addOption(
      new Option(
        '--scheduler <name>',
        'the scheduler (default: launchd on macOS, schtasks on Windows, crontab when installed, else systemd)',
      ).choices(['cron', 'systemd', 'launchd', 'schtasks']),
    )
    .option('--config <file>', 'the Sleep config file (its state_dir holds the log and the record of the job)')
    .action(async (opts: ScheduleFlags) => {
      const { schedule } = await import('../sleep/schedule/schedule.ts');
      const { SKILLOPT_BIN } = await import('../web/actions/jobs.ts');
      const stateDir = await sleepStateDir(opts.config);
      const result = schedule(
        {
          hour: opts.hour,
          minute: opts.minute,
          project: opts.project ?? process.cwd(),
          stateDir,
          scheduler: opts.scheduler as never,
        },
        schedulerSystem(),
        { node: process.execPath, bin: SKILLOPT_BIN },
      );
      const at = `${String(result.entry.hour).padStart(2, '0')}:${String(result.entry.minute).padStart(2, '0')}`;
      process.stdout.write(
        `Sleep runs every night at ${at} for ${result.entry.project} (${result.entry.scheduler}); its output goes to ${path.join(stateDir, 'logs', 'nightly.log')}\n${result.lines.map((l) => `  ${l}`).join('\n')}\n`,
      );
    });
  sleep
    .command('unschedule')
    .description('Remove the nightly job `schedule` added for this project (only that)')
    .option('--project <dir>', 'the project (default: the working directory)')
    .option('--config <file>', 'the Sleep config file')
    .action(async (opts: { project?: string; config?: string }) => {
      const { unschedule } = await import('../sleep/schedule/schedule.ts');
      const project = path.resolve(opts.project ?? process.cwd());
      const lines = unschedule(project, await sleepStateDir(opts.config), schedulerSystem());
      process.stdout.write(
        lines
          ? `Sleep no longer runs nightly for ${project}\n${lines.map((l) => `  ${l}`).join('\n')}\n`
          : `No nightly job is scheduled for ${project}\n`,
      );
    });
}
