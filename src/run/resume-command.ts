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

/**
 * How this process was called, as the commands it prints say it: through npx; as
 * `node bin/skillopt.js` from a checkout (its script under the working directory); else as the
 * installed `skillopt`.
 */
export function programName(
  environment: Record<string, string | undefined> = process.env,
  script = process.argv[1] ?? '',
  cwd = process.cwd(),
): string {
  if (environment.npm_command === 'exec') return 'npx skillopt';
  const rel = path.relative(cwd, script);
  if (path.basename(script) === 'skillopt.js' && rel && !rel.startsWith('..') && !path.isAbsolute(rel))
    return `node ${shellWord(rel.split(path.sep).join('/'))}`;
  return 'skillopt';
}

const SAFE = /^[\w@%+=:,./-]+$/;

/** One word for a POSIX shell. */
export function shellWord(word: string): string {
  return SAFE.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A path as short as it can be said from the working directory. */
export function shownPath(dir: string, cwd = process.cwd()): string {
  const rel = path.relative(cwd, dir);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : dir;
}

/**
 * The words after the program that resume a run (`train --config … --resume DIR --set …`).
 * `extra` overrides replace earlier ones of the same key (a raised budget). `redactSecrets`
 * hides the value of an override whose key names a secret.
 */
export function resumeArgs(
  inv: Invocation,
  runDir: string,
  extra: string[] = [],
  cwd = process.cwd(),
  redactSecrets = false,
): string[] {
  const keyOf = (o: string) => o.slice(0, Math.max(0, o.indexOf('=')));
  const replaced = new Set(extra.map(keyOf));
  const overrides = [...inv.overrides.filter((o) => !replaced.has(keyOf(o))), ...extra].map((o) => {
    const key = keyOf(o);
    return redactSecrets && isSecretKeyName(key.split('.').at(-1) ?? '') ? `${key}=${REDACTED}` : o;
  });
  return [
    'train',
    '--config',
    inv.config,
    '--resume',
    shownPath(path.resolve(runDir), cwd),
    ...overrides.flatMap((o) => ['--set', o]),
  ];
}

/**
 * The command line that resumes a run, as the user can paste it (see `resumeArgs`). A value
 * whose key names a secret is not printed.
 */
export function resumeCommand(inv: Invocation, runDir: string, extra: string[] = [], cwd = process.cwd()): string {
  return [inv.program ?? 'skillopt', ...resumeArgs(inv, runDir, extra, cwd, true).map(shellWord)].join(' ');
}

/** How an evaluation was started: the config and overrides, and what it scores. */
export interface EvalInvocation extends Invocation {
  skills: readonly string[];
  split: string;
  targets: readonly string[];
  repeats: number;
}

/**
 * The command line that continues an evaluation: the same one, into the same output directory
 * (whose finished rollouts it takes up). A value whose key names a secret is not printed.
 */
export function evalResumeCommand(inv: EvalInvocation, outDir: string, cwd = process.cwd()): string {
  const overrides = inv.overrides.map((o) => {
    const key = o.slice(0, Math.max(0, o.indexOf('=')));
    return isSecretKeyName(key.split('.').at(-1) ?? '') ? `${key}=${REDACTED}` : o;
  });
  const words = [
    'eval',
    '--config',
    inv.config,
    ...overrides.flatMap((o) => ['--set', o]),
    ...inv.skills.flatMap((s) => ['--skill', s]),
    '--split',
    inv.split,
    ...inv.targets.flatMap((t) => ['--target', t]),
    '--repeats',
    String(inv.repeats),
    '--out',
    shownPath(path.resolve(outDir), cwd),
  ];
  return [inv.program ?? 'skillopt', ...words.map(shellWord)].join(' ');
}

/**
 * The words of a command line as a POSIX shell splits them: plain words, '…' and "…" quotes
 * (in which a backslash escapes only $ ` " \ and a newline) and \-escapes (what `shellWord`
 * writes, and how agent CLIs quote the commands they run).
 */
export function shellSplit(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '"') {
      let part = '';
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && '$`"\\\n'.includes(line[j + 1]!)) j++;
        part += line[j];
      }
      if (j >= line.length) throw new Error(`unbalanced quote in: ${line}`);
      word = (word ?? '') + part;
      i = j;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unbalanced quote in: ${line}`);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i];
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** How a run was started, read back from the command that resumes it (`resumeCommand`'s output). */
export function parseResumeCommand(line: string): (Invocation & { runDir: string }) | undefined {
  let words: string[];
  try {
    words = shellSplit(line);
  } catch {
    return undefined;
  }
  const at = words.indexOf('train');
  if (at < 1) return undefined;
  const overrides: string[] = [];
  let config: string | undefined;
  let runDir: string | undefined;
  for (let i = at + 1; i < words.length; i += 2) {
    const [flag, value] = [words[i], words[i + 1]];
    if (value === undefined) return undefined;
    if (flag === '--config') config = value;
    else if (flag === '--resume') runDir = value;
    else if (flag === '--set') overrides.push(value);
    else return undefined;
  }
  if (config === undefined || runDir === undefined) return undefined;
  return { program: words.slice(0, at).join(' '), config, overrides, runDir };
}
