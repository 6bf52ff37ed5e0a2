/**
 * One run of an agent CLI as a child process: started in a process group of its own, fed its
 * prompt on stdin, read line by line, and ended, with everything it started, when the run times
 * out, the caller aborts, or the reader has seen enough (a login error no retry will fix).
 *
 * Some CLIs start their commands in sessions of their own (Claude Code does), out of reach of
 * the group; so every run's environment carries a marker, and on Linux any process still holding
 * it when the run ends is killed too.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import readline from 'node:readline';

export interface ProcessSpec {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: string;
  /** Wall-clock limit (ms); 0 or absent = none. */
  timeoutMs?: number;
  /** Bytes of stdout and stderr together after which the process is ended; absent = no limit. */
  maxOutputBytes?: number;
  signal?: AbortSignal;
  /** Each stdout line as it arrives; returning 'stop' ends the process (the reader saw a fatal error). */
  onLine?(line: string): void | 'stop';
}

export interface ProcessResult {
  lines: string[];
  stderr: string;
  exitCode: number | null;
  /** The signal that ended the process, if one did. */
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** `onLine` asked to stop. */
  stopped: boolean;
  /** It wrote more than `maxOutputBytes` and was ended. */
  overflowed?: boolean;
  /** The process could not be started (ENOENT, EACCES, …). */
  spawnError?: NodeJS.ErrnoException;
  durationMs: number;
}

/** Time between SIGTERM and SIGKILL when ending a run. */
const GRACE_MS = 1500;
/** stderr kept for error messages (the end of it, which is where CLIs say what went wrong). */
const STDERR_KEEP = 64_000;

export const RUN_MARKER = 'SKILLOPT_AGENT_RUN';

/** Kills every process whose environment carries this run's marker (Linux; elsewhere the group kill is all). */
function killMarked(marker: string): void {
  if (process.platform !== 'linux') return;
  const needle = Buffer.from(`${RUN_MARKER}=${marker}\0`);
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      if (fs.readFileSync(`/proc/${pid}/environ`).includes(needle)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone, or not ours to read
    }
  }
}

/** Signals the whole group (the CLI and every command it started); a group already gone is fine. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left in the group.
  }
}

export function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const lines: string[] = [];
    let stderr = '';
    let timedOut = false;
    let aborted = false;
    let stopped = false;
    let overflowed = false;
    let ending = false;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;

    const marker = randomUUID();
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: { ...spec.env, [RUN_MARKER]: marker },
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });

    const end = (why: 'timeout' | 'abort' | 'stop' | 'overflow') => {
      if (ending || child.pid === undefined) return;
      ending = true;
      if (why === 'timeout') timedOut = true;
      else if (why === 'abort') aborted = true;
      else if (why === 'overflow') overflowed = true;
      else stopped = true;
      signalGroup(child.pid, 'SIGTERM');
      killMarked(marker);
      killTimer = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), GRACE_MS);
      killTimer.unref();
    };

    const timer = spec.timeoutMs ? setTimeout(() => end('timeout'), spec.timeoutMs) : undefined;
    const onAbort = () => end('abort');
    if (spec.signal?.aborted) queueMicrotask(onAbort);
    else spec.signal?.addEventListener('abort', onAbort, { once: true });

    let written = 0;
    const count = (chunk: Buffer | string) => {
      written += chunk.length;
      if (spec.maxOutputBytes !== undefined && written > spec.maxOutputBytes) end('overflow');
    };
    if (spec.maxOutputBytes !== undefined) child.stdout.on('data', count);
    const out = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
    out.on('line', (line) => {
      lines.push(line);
      if (!ending && spec.onLine?.(line) === 'stop') end('stop');
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (spec.maxOutputBytes !== undefined) count(chunk);
      stderr += chunk;
      if (stderr.length > 2 * STDERR_KEEP) stderr = stderr.slice(-STDERR_KEEP);
    });
    child.stdin.on('error', () => {
      // The CLI closed its input early (it failed at start); its exit tells what happened.
    });
    child.stdin.end(spec.stdin ?? '');

    let spawnError: NodeJS.ErrnoException | undefined;
    child.on('error', (err) => {
      spawnError = err as NodeJS.ErrnoException;
    });
    child.on('exit', () => {
      // Commands the agent left running in the background go with it; then nothing holds its output open.
      if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      killMarked(marker);
      drainTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, GRACE_MS);
      drainTimer.unref();
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      if (drainTimer) clearTimeout(drainTimer);
      spec.signal?.removeEventListener('abort', onAbort);
      resolve({
        lines,
        stderr: stderr.slice(-STDERR_KEEP),
        exitCode: code,
        signal,
        timedOut,
        aborted,
        stopped,
        ...(overflowed ? { overflowed } : {}),
        ...(spawnError ? { spawnError } : {}),
        durationMs: performance.now() - started,
      });
    });
  });
}
