/**
 * The `skillopt train` and `skillopt eval` processes the dashboard starts. Each is an ordinary
 * process of the CLI, started with the exact words the page shows, in a process group of its own
 * (a Ctrl-C in the dashboard's terminal does not reach it) and with its console written to a log
 * file (never a pipe: it keeps running, and writing, when the dashboard stops). Stopping the
 * dashboard leaves them running: a run shows as running from its lock in any dashboard, which
 * can stop it. Stopping a job sends SIGINT, the same as Ctrl-C: it stops at a safe point.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { shellWord } from '../../run/resume-command.ts';
import { openInside, readAt } from '../files/safe-path.ts';

/** The CLI's entry point, run with this Node. */
export const SKILLOPT_BIN = path.resolve(import.meta.dirname, '../../../bin/skillopt.js');

/** How much of a job's console the page is shown (its end). */
const TAIL_BYTES = 16 << 10;

export type JobKind = 'train' | 'resume' | 'eval';

export interface JobInfo {
  id: string;
  kind: JobKind;
  /** The command as the user would type it in `cwd`. */
  command: string;
  cwd: string;
  /** The run directory the job works on. */
  runDir: string;
  /** Where an evaluation writes (its output directory). */
  outDir?: string;
  pid?: number;
  startedAt: string;
  state: 'running' | 'exited';
  exitCode: number | null;
  signal: string | null;
  /** How many SIGINTs it was sent (a second one exits at once). */
  interrupts: number;
  /** The end of its console output. */
  output: string;
  outputTruncated: boolean;
}

interface Job {
  info: Omit<JobInfo, 'output' | 'outputTruncated'>;
  child: ChildProcess;
  log: string;
}

export interface JobsOptions {
  /** How the program is called in the commands shown (`skillopt`, `npx skillopt`). */
  program: string;
  cwd?: string;
  /** Environment of the processes (default: the dashboard's). */
  environment?: NodeJS.ProcessEnv;
}

export class Jobs {
  private readonly jobs = new Map<string, Job>();
  private logDir?: string;
  private next = 1;
  readonly cwd: string;
  /** How the program is called in the commands shown. */
  readonly program: string;

  constructor(private readonly options: JobsOptions) {
    this.cwd = options.cwd ?? process.cwd();
    this.program = options.program;
  }

  /** The command line of `args` as shown to the user. */
  command(args: string[]): string {
    return [this.program, ...args.map(shellWord)].join(' ');
  }

  /** Starts `skillopt <args>`; the job is returned at once (it may fail later: see its state). */
  start(kind: JobKind, args: string[], where: { runDir: string; outDir?: string }): JobInfo {
    this.logDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-ui-jobs-'));
    const id = String(this.next++);
    const log = path.join(this.logDir, `job-${id}.log`);
    const fd = fs.openSync(log, 'w');
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [SKILLOPT_BIN, ...args], {
        cwd: this.cwd,
        env: this.options.environment ?? process.env,
        detached: true,
        stdio: ['ignore', fd, fd],
      });
    } finally {
      fs.closeSync(fd);
    }
    const info: Job['info'] = {
      id,
      kind,
      command: this.command(args),
      cwd: this.cwd,
      runDir: where.runDir,
      ...(where.outDir ? { outDir: where.outDir } : {}),
      pid: child.pid,
      startedAt: new Date().toISOString(),
      state: 'running',
      exitCode: null,
      signal: null,
      interrupts: 0,
    };
    child.on('error', (err) => {
      fs.appendFileSync(log, `\nskillopt could not be started: ${err.message}\n`);
      Object.assign(info, { state: 'exited', exitCode: -1 });
    });
    child.on('exit', (code, signal) => Object.assign(info, { state: 'exited', exitCode: code, signal }));
    child.unref();
    this.jobs.set(id, { info, child, log });
    return this.view(this.jobs.get(id)!);
  }

  private view(job: Job): JobInfo {
    const tail = this.tail(job.log);
    return { ...job.info, output: tail.text, outputTruncated: tail.truncated };
  }

  private tail(file: string): { text: string; truncated: boolean } {
    const open = openInside(this.logDir!, file);
    if (!open) return { text: '', truncated: false };
    try {
      const size = open.stat.size;
      const from = Math.max(0, size - TAIL_BYTES);
      return { text: readAt(open.fd, size - from, from).toString('utf8'), truncated: from > 0 };
    } finally {
      fs.closeSync(open.fd);
    }
  }

  get(id: string): JobInfo | undefined {
    const job = this.jobs.get(id);
    return job && this.view(job);
  }

  /** The jobs, newest first; those of one run directory when `runDir` is given. */
  list(runDir?: string): JobInfo[] {
    return [...this.jobs.values()]
      .filter((j) => runDir === undefined || j.info.runDir === runDir)
      .reverse()
      .map((j) => this.view(j));
  }

  /** The running job of a run directory, if any (of the kinds given). */
  running(runDir: string, kinds: JobKind[] = ['train', 'resume', 'eval']): JobInfo | undefined {
    for (const j of this.jobs.values())
      if (j.info.runDir === runDir && j.info.state === 'running' && kinds.includes(j.info.kind)) return this.view(j);
    return undefined;
  }

  /** Sends SIGINT (a stop at a safe point; a second one exits at once). */
  interrupt(id: string): JobInfo {
    const job = this.jobs.get(id)!;
    job.info.interrupts++;
    job.child.kill('SIGINT');
    return this.view(job);
  }

  /** The jobs still running, in words, for the message the dashboard prints when it stops. */
  stillRunning(): string[] {
    return [...this.jobs.values()]
      .filter((j) => j.info.state === 'running')
      .map(
        (j) => `${j.info.kind === 'eval' ? 'evaluation' : 'run'} ${j.info.outDir ?? j.info.runDir} (pid ${j.info.pid})`,
      );
  }

  /** Removes the console logs unless a job still writes to one. */
  close(): void {
    if (this.logDir && this.stillRunning().length === 0) fs.rmSync(this.logDir, { recursive: true, force: true });
  }
}
