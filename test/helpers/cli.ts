import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { shellSplit } from '../../src/run/resume-command.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(ROOT, 'bin/skillopt.js');
/** Node's arguments for a child that runs our TypeScript, loaded as the suite loads it (scripts/ts-loader.js). */
export const TS_IMPORT = ['--import', pathToFileURL(path.join(ROOT, 'scripts/ts-loader.js')).href];

/** Runs the real `skillopt` program, as a user would. */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 120_000,
  });
}

/** The same without blocking this process (a fake server of the test answers the program's calls). */
export function runCliAsync(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Runs a `skillopt …` command line the program printed, as the user would paste it. */
export function runPrinted(line: string, options: Parameters<typeof runCli>[1] = {}): SpawnSyncReturns<string> {
  const words = shellSplit(line);
  // `skillopt …`, or `node bin/skillopt.js …` as a program run from a checkout prints it.
  const skip = words[0] === 'skillopt' ? 1 : words[0] === 'node' && words[1]?.endsWith('skillopt.js') ? 2 : 0;
  if (!skip) throw new Error(`not a skillopt command: ${line}`);
  return runCli(words.slice(skip), options);
}
