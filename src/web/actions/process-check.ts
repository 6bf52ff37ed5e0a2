/**
 * Whether a process is a skillopt training of a given run directory, from what `/proc` says of
 * it: its command line names the skillopt program and `train`, and when it names a directory
 * (`--out DIR`, `--resume DIR`, relative to its own working directory), that directory is the
 * run's. A run lock is only a file: before the dashboard signals the pid one names, it checks.
 */
import fs from 'node:fs';
import path from 'node:path';

export type ProcessCheck = { ok: true } | { ok: false; why: string };

function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** The directory a `train` command line writes, when it names one. */
function namedDir(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    for (const flag of ['--out', '--resume']) {
      if (a === flag && args[i + 1] !== undefined) return args[i + 1];
      if (a.startsWith(`${flag}=`)) return a.slice(flag.length + 1);
    }
  }
  return undefined;
}

export function isRunOf(pid: number, runDir: string, procRoot = '/proc'): ProcessCheck {
  let args: string[];
  let cwd: string;
  try {
    args = fs
      .readFileSync(path.join(procRoot, String(pid), 'cmdline'), 'utf8')
      .split('\0')
      .filter(Boolean);
    cwd = fs.readlinkSync(path.join(procRoot, String(pid), 'cwd'));
  } catch (err) {
    return { ok: false, why: `its command line cannot be read: ${(err as Error).message}` };
  }
  const shown = args.join(' ').slice(0, 200);
  const program = args.findIndex((a) => /skillopt/i.test(path.basename(a)) || /[\\/]skillopt[\\/]/i.test(a));
  if (program < 0 || !args.slice(program + 1).includes('train'))
    return { ok: false, why: `its command line is not skillopt train: ${shown}` };
  const dir = namedDir(args);
  if (dir !== undefined && real(path.resolve(cwd, dir)) !== real(runDir))
    return { ok: false, why: `it trains ${path.resolve(cwd, dir)}: ${shown}` };
  return { ok: true };
}
