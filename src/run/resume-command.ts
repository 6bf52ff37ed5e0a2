/**
 * The command that resumes a run, as the user can paste it: the same config and overrides, and
 * the run directory named with `--resume`.
 */
import path from 'node:path';
import { isSecretKeyName, REDACTED } from '../config/redact.ts';

/** How a training run was started. */
export interface Invocation {
  /** How the user calls the program (`npx skillopt`, `skillopt`). */
  program?: string;
  /** The config file, as given. */
  config: string;
  /** `key=value` overrides, in order. */
  overrides: string[];
}

/** How this process was called: through npx, or directly. */
export function programName(environment: Record<string, string | undefined> = process.env): string {
  return environment.npm_command === 'exec' ? 'npx skillopt' : 'skillopt';
}

const SAFE = /^[\w@%+=:,./-]+$/;

/** One word for a POSIX shell. */
export function shellWord(word: string): string {
  return SAFE.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A path as short as it can be said from the working directory. */
function shown(dir: string, cwd: string): string {
  const rel = path.relative(cwd, dir);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : dir;
}

/**
 * `extra` overrides replace earlier ones of the same key (a raised budget). A value whose key
 * names a secret is not printed.
 */
export function resumeCommand(inv: Invocation, runDir: string, extra: string[] = [], cwd = process.cwd()): string {
  const keyOf = (o: string) => o.slice(0, Math.max(0, o.indexOf('=')));
  const replaced = new Set(extra.map(keyOf));
  const overrides = [...inv.overrides.filter((o) => !replaced.has(keyOf(o))), ...extra].map((o) => {
    const key = keyOf(o);
    return isSecretKeyName(key.split('.').at(-1) ?? '') ? `${key}=${REDACTED}` : o;
  });
  const words = ['train', '--config', inv.config, '--resume', shown(path.resolve(runDir), cwd), ...overrides.flatMap((o) => ['--set', o])];
  return [inv.program ?? 'skillopt', ...words.map(shellWord)].join(' ');
}
