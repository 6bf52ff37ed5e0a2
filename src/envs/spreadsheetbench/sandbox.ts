/**
 * Running generated spreadsheet code. Each run happens in a folder of its own under the system
 * temp directory, holding the script, a copy of the input workbook and nothing else (never a
 * golden workbook); with a scrubbed environment (what Python needs to start, HOME and TMPDIR in
 * that folder, no key of any kind); a time limit that ends the whole process group; a cap on
 * what it prints and on the size of any file it writes. That keeps keys and answers out of the
 * script's way; it is not a sandbox against a hostile program, which can still read whatever the
 * user running skillopt can.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runProcess } from '../../model/harness/process.ts';
import { pythonEnvironment } from '../python.ts';

/** The runner: sets INPUT_PATH and OUTPUT_PATH and runs a script (python/run_solution.py). */
/** The script a solution is written to, in the folder it runs in. */
export const SOLUTION = 'solution.py';
export const RUNNER = path.join(import.meta.dirname, 'python', 'run_solution.py');

export interface RunLimits {
  timeoutMs: number;
  /** Printed output (stdout and stderr) after which the script is stopped. */
  maxOutputBytes: number;
  /** Largest file the script may write. */
  maxFileBytes: number;
}

export interface ScriptRun {
  ok: boolean;
  /** What it printed (the end of it, when long), or why it was stopped. */
  log: string;
  /** Why it failed, in a few words: "exit code 2", "stopped after 120 s". */
  failure?: string;
}

const LOG_CHARS = 8000;

/** The environment of a generated script: `pythonEnvironment`, its home and temp directory in `dir`. */
export function scrubbedEnvironment(
  dir: string,
  maxFileBytes: number,
  parent: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const tmp = path.join(dir, '.tmp');
  fs.mkdirSync(tmp, { recursive: true });
  return { ...pythonEnvironment(parent), HOME: dir, TMPDIR: tmp, SKILLOPT_MAX_FILE_BYTES: String(maxFileBytes) };
}

const tail = (text: string, n: number) => (text.length > n ? `…${text.slice(-n)}` : text);

/** Runs `python run_solution.py <args>` in `dir` (the runner's arguments: script, input, output). */
export async function runInFolder(
  python: string,
  dir: string,
  args: string[],
  limits: RunLimits,
  signal?: AbortSignal,
): Promise<ScriptRun> {
  const res = await runProcess({
    command: python,
    args: [RUNNER, ...args],
    cwd: dir,
    env: scrubbedEnvironment(dir, limits.maxFileBytes),
    timeoutMs: limits.timeoutMs,
    maxOutputBytes: limits.maxOutputBytes,
    signal,
  });
  // Not the script's doing: the rollout cannot be scored (an infrastructure error, not a wrong answer).
  if (res.spawnError) throw new Error(`${python} could not be started: ${res.spawnError.message}`);
  if (res.aborted) throw new Error('the script was stopped: the run is ending');
  const printed = tail(
    [res.lines.join('\n'), res.stderr]
      .filter((s) => s.trim())
      .join('\n')
      .trim(),
    LOG_CHARS,
  );
  // Stopped by a limit: the log says which, after whatever it printed.
  const stopped = res.timedOut
    ? `stopped after ${Math.round(limits.timeoutMs / 1000)} s (time limit)`
    : res.overflowed
      ? `stopped after printing more than ${limits.maxOutputBytes} bytes`
      : undefined;
  let failure = stopped;
  if (!failure && res.exitCode === 3) failure = 'the script finished without writing the output workbook';
  else if (!failure && res.exitCode !== 0)
    failure = res.signal ? `ended by ${res.signal}` : `exit code ${res.exitCode}`;
  const log = stopped ? [printed, `[${stopped}]`].filter(Boolean).join('\n') : printed || (failure ?? '');
  return { ok: !failure, log, ...(failure ? { failure } : {}) };
}

/**
 * Runs `code` on a copy of `input` in a fresh folder under `parent`; the workbook it writes is
 * `<folder>/output.xlsx`.
 */
export async function runScript(
  python: string,
  code: string,
  input: string,
  parent: string,
  limits: RunLimits,
  signal?: AbortSignal,
): Promise<ScriptRun & { output: string }> {
  const dir = fs.mkdtempSync(path.join(parent, 'run-'));
  fs.writeFileSync(path.join(dir, SOLUTION), code);
  fs.copyFileSync(input, path.join(dir, 'input.xlsx'));
  const output = path.join(dir, 'output.xlsx');
  const run = await runInFolder(python, dir, [SOLUTION, 'input.xlsx', 'output.xlsx'], limits, signal);
  return { ...run, output };
}
