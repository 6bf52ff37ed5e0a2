/**
 * A tool's long work runs as a process of the `skillopt` CLI (the same code as the command a user
 * types), so a cancelled tool call stops it the way Ctrl-C would: SIGINT, which a training run
 * answers by stopping at a safe point, resumable. Its output lines are passed on as they come.
 */
import { spawn } from 'node:child_process';
import { SKILLOPT_BIN } from '../web/actions/jobs.ts';

export interface CliResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  cancelled: boolean;
}

export interface CliOptions {
  cwd: string;
  signal?: AbortSignal;
  /** Each line the process prints (stdout and stderr), as it comes. */
  onLine?: (line: string) => void;
  environment?: NodeJS.ProcessEnv;
}

/** Runs `skillopt <args>` to its end. */
export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SKILLOPT_BIN, ...args], {
      cwd: options.cwd,
      env: options.environment ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let cancelled = false;
    const lines = (append: (s: string) => void) => {
      let partial = '';
      return (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        append(text);
        partial += text;
        const parts = partial.split('\n');
        partial = parts.pop()!;
        for (const line of parts) if (line.trim()) options.onLine?.(line);
      };
    };
    child.stdout.on(
      'data',
      lines((s) => (stdout += s)),
    );
    child.stderr.on(
      'data',
      lines((s) => (stderr += s)),
    );
    const cancel = () => {
      cancelled = true;
      child.kill('SIGINT');
    };
    if (options.signal?.aborted) cancel();
    else options.signal?.addEventListener('abort', cancel, { once: true });
    child.on('error', (err) => {
      stderr += `skillopt could not be started: ${err.message}\n`;
    });
    child.on('close', (exitCode, signal) => {
      options.signal?.removeEventListener('abort', cancel);
      resolve({ exitCode, signal, stdout, stderr, cancelled });
    });
  });
}
