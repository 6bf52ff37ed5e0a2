import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(ROOT, 'bin/skillopt.js');

/** Runs the real `skillopt` program, as a user would. */
export function runCli(args: string[], options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 120_000,
  });
}
