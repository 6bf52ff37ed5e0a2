/**
 * `skillopt sleep schedule` / `unschedule`: the nightly job on the system's own scheduler
 * (crontab or a systemd user timer on Linux, launchd on macOS; on Windows the `schtasks` command
 * is printed), and a record of what was added (`schedule.json` in Sleep's state folder), so
 * `unschedule` removes exactly that and `status` can say when the night runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { z } from 'zod';
import { UserError } from '../../errors.ts';
import { readJson, writeFileAtomic } from '../../run/atomic.ts';
import { Crontab } from './crontab.ts';
import { nightlyJob, type JobInput } from './job.ts';
import { LaunchAgent } from './launchd.ts';
import { SystemdTimer } from './systemd.ts';
import { schtasksCreate, schtasksDelete } from './windows.ts';

export const SCHEDULERS = ['cron', 'systemd', 'launchd', 'schtasks'] as const;
export type Scheduler = (typeof SCHEDULERS)[number];

const EntrySchema = z.object({
  project: z.string(),
  digest: z.string(),
  scheduler: z.enum(SCHEDULERS),
  hour: z.number(),
  minute: z.number(),
  added: z.array(z.string()),
  at: z.string(),
});
const RecordSchema = z.object({ jobs: z.array(EntrySchema) });
export type ScheduleEntry = z.infer<typeof EntrySchema>;

/** The system commands and folders (tests point them at stand-ins). */
export interface SchedulerSystem {
  platform?: NodeJS.Platform;
  crontab?: string;
  systemctl?: string;
  unitDir?: string;
  launchctl?: string;
  agentDir?: string;
  /** The Node binary and the CLI entry point the job runs (default: this process's). */
  node?: string;
  bin?: string;
}

const recordFile = (stateDir: string) => path.join(stateDir, 'schedule.json');

export function scheduledJobs(stateDir: string): ScheduleEntry[] {
  const file = recordFile(stateDir);
  if (!fs.existsSync(file)) return [];
  const parsed = RecordSchema.safeParse(readJson(file));
  if (!parsed.success)
    throw new UserError(
      `${file}: not a schedule record skillopt wrote (${parsed.error.issues[0]?.message}); remove it and schedule again`,
    );
  return parsed.data.jobs;
}

function saveJobs(stateDir: string, jobs: ScheduleEntry[]): void {
  fs.mkdirSync(stateDir, { recursive: true });
  writeFileAtomic(recordFile(stateDir), `${JSON.stringify({ jobs }, null, 2)}\n`);
}

const onPath = (cmd: string) => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).error === undefined;

/** The scheduler of this system: launchd on macOS, schtasks on Windows, else crontab when installed, else systemd. */
export function defaultScheduler(system: SchedulerSystem): Scheduler {
  const platform = system.platform ?? process.platform;
  if (platform === 'darwin') return 'launchd';
  if (platform === 'win32') return 'schtasks';
  return onPath(system.crontab ?? 'crontab') || system.crontab ? 'cron' : 'systemd';
}

export interface ScheduleResult {
  entry: ScheduleEntry;
  /** What to tell the user (the line, the files, or the command to run on Windows). */
  lines: string[];
}

export function schedule(
  input: JobInput & { scheduler?: Scheduler },
  system: SchedulerSystem,
  defaults: { node: string; bin: string },
): ScheduleResult {
  const job = nightlyJob(input, { node: system.node ?? defaults.node, bin: system.bin ?? defaults.bin });
  const scheduler = input.scheduler ?? defaultScheduler(system);
  const jobs = scheduledJobs(input.stateDir);
  const earlier = jobs.find((j) => j.digest === job.digest);
  if (earlier && earlier.scheduler !== scheduler) unscheduleEntry(earlier, system);
  let added: string[];
  let lines: string[];
  if (scheduler === 'cron') {
    const line = new Crontab(system.crontab).schedule(job);
    added = ['crontab line'];
    lines = [`crontab: ${line}`];
  } else if (scheduler === 'systemd') {
    added = new SystemdTimer({ unitDir: system.unitDir, systemctl: system.systemctl }).schedule(job);
    lines = added.map((f) => `systemd user unit: ${f}`);
  } else if (scheduler === 'launchd') {
    added = new LaunchAgent({ agentDir: system.agentDir, launchctl: system.launchctl }).schedule(job);
    lines = added.map((f) => `launchd agent: ${f}`);
  } else {
    added = [];
    lines = ['Run this in a Command Prompt to create the nightly task:', schtasksCreate(job)];
  }
  const entry: ScheduleEntry = {
    project: job.project,
    digest: job.digest,
    scheduler,
    hour: job.hour,
    minute: job.minute,
    added,
    at: new Date().toISOString(),
  };
  saveJobs(input.stateDir, [...jobs.filter((j) => j.digest !== job.digest), entry]);
  return { entry, lines };
}

function unscheduleEntry(entry: ScheduleEntry, system: SchedulerSystem): string[] {
  if (entry.scheduler === 'cron')
    return new Crontab(system.crontab).unschedule(entry.digest)
      ? ['removed the crontab line']
      : ['the crontab line was already gone'];
  if (entry.scheduler === 'systemd')
    return new SystemdTimer({ unitDir: system.unitDir, systemctl: system.systemctl }).unschedule(entry.digest)
      ? entry.added.map((f) => `removed ${f}`)
      : ['the systemd units were already gone'];
  if (entry.scheduler === 'launchd')
    return new LaunchAgent({ agentDir: system.agentDir, launchctl: system.launchctl }).unschedule(entry.digest)
      ? entry.added.map((f) => `removed ${f}`)
      : ['the launchd agent was already gone'];
  return ['Run this in a Command Prompt to delete the nightly task:', schtasksDelete(entry.digest)];
}

/** Removes the job of `project` that `schedule` added; undefined when there was none. */
export function unschedule(project: string, stateDir: string, system: SchedulerSystem): string[] | undefined {
  const abs = path.resolve(project);
  const jobs = scheduledJobs(stateDir);
  const entry = jobs.find((j) => j.project === abs);
  if (!entry) return undefined;
  const lines = unscheduleEntry(entry, system);
  saveJobs(
    stateDir,
    jobs.filter((j) => j !== entry),
  );
  return lines;
}
