/**
 * The nightly job: what the system runs (`skillopt sleep run` for one project, its output
 * appended to a log in Sleep's state folder), and the name that marks it as ours. The marker
 * carries only a digest of the project's path, so the path never appears as marker text and
 * re-scheduling a project replaces its job instead of adding a second one.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { UserError } from '../../errors.ts';
import { shellWord } from '../../run/resume-command.ts';

export interface NightlyJob {
  hour: number;
  minute: number;
  project: string;
  /** Where the job's output goes. */
  logFile: string;
  /** The program and its arguments (never through a shell on the systems that take a vector). */
  argv: string[];
  /** Variables the night must see as the user's runs do (`SKILLOPT_HOME`, when it is set). */
  env: Record<string, string>;
  /** sha256 of the project's absolute path. */
  digest: string;
}

export interface JobInput {
  hour: number;
  minute: number;
  project: string;
  stateDir: string;
  /** The Node binary and the CLI's entry point (default: this process's). */
  node?: string;
  bin?: string;
  /** The environment `sleep schedule` runs in (default: this process's). */
  environment?: Record<string, string | undefined>;
}

/** Variables a night shares with the user's runs, carried into the job when they are set. */
const SHARED = ['SKILLOPT_HOME'] as const;

// Control characters would let a path end the crontab line or the unit's value early.
const CONTROL = /[\u0000-\u001f\u007f]/;

export function nightlyJob(input: JobInput, defaults: { node: string; bin: string }): NightlyJob {
  if (!Number.isInteger(input.hour) || input.hour < 0 || input.hour > 23)
    throw new UserError(`--hour expects a whole number from 0 to 23, got ${input.hour}`);
  if (!Number.isInteger(input.minute) || input.minute < 0 || input.minute > 59)
    throw new UserError(`--minute expects a whole number from 0 to 59, got ${input.minute}`);
  const project = path.resolve(input.project);
  const node = input.node ?? defaults.node;
  const bin = input.bin ?? defaults.bin;
  const logFile = path.join(path.resolve(input.stateDir), 'logs', 'nightly.log');
  const environment = input.environment ?? process.env;
  // Paths, absolute: the job runs from the project's folder.
  const env = Object.fromEntries(
    SHARED.flatMap((k) => (environment[k]?.trim() ? [[k, path.resolve(environment[k]!.trim())]] : [])),
  );
  const words: [string, string][] = [
    ['the project path', project],
    ['the state folder', logFile],
    ['the node path', node],
    ['the skillopt path', bin],
    ...Object.entries(env),
  ];
  for (const [what, value] of words) {
    if (CONTROL.test(value))
      throw new UserError(
        `${what} contains a control character; a scheduled job cannot name it safely: ${JSON.stringify(value)}`,
      );
  }
  return {
    hour: input.hour,
    minute: input.minute,
    project,
    logFile,
    argv: [node, bin, 'sleep', 'run', '--project', project],
    env,
    digest: createHash('sha256').update(project).digest('hex'),
  };
}

/** The job as one POSIX shell command (every word quoted): make the log folder, run, append. */
export function shellCommand(job: NightlyJob): string {
  const q = shellWord;
  const env = Object.entries(job.env)
    .map(([k, v]) => `${k}=${q(v)} `)
    .join('');
  return `mkdir -p ${q(path.dirname(job.logFile))} && cd ${q(job.project)} && ${env}${job.argv.map(q).join(' ')} >> ${q(job.logFile)} 2>&1`;
}

export const pad2 = (n: number) => String(n).padStart(2, '0');
