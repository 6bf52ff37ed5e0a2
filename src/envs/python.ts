/**
 * The Python interpreter an env runs programs with (SpreadsheetBench's generated code, ALFWorld's
 * game processes): the one the config names, else the first of `python3` on PATH and the
 * system's own `/usr/bin/python3` that has the modules the env needs. Checked once per process
 * and interpreter, before any model call; none that fits is a `UserError` that says what was
 * tried, what each lacks and how to install it.
 */
import { spawnSync } from 'node:child_process';
import { UserError } from '../errors.ts';

export interface PythonNeed {
  /** Who needs it, for messages: "SpreadsheetBench". */
  who: string;
  /** Modules that must import (checked without importing them). */
  modules: string[];
  /** How to get the modules, for messages. */
  install: string;
  /** The config key that names an interpreter: 'env.python'. */
  optionKey: string;
}

const CANDIDATES = ['python3', '/usr/bin/python3'];

/** Prints the interpreter's own path, its version and the modules it lacks, as JSON. */
const PROBE = [
  'import importlib.util, json, sys',
  'missing = [m for m in sys.argv[1:] if importlib.util.find_spec(m) is None]',
  'print(json.dumps({"exe": sys.executable, "version": list(sys.version_info[:2]), "missing": missing}))',
].join('\n');

interface Probe {
  exe: string;
  version: [number, number];
  missing: string[];
}

const probes = new Map<string, Probe | string>();

/** What an interpreter is and lacks, or why it could not be asked. */
function probe(command: string, modules: string[]): Probe | string {
  const key = `${command}\u0000${modules.join(',')}`;
  const known = probes.get(key);
  if (known !== undefined) return known;
  const res = spawnSync(command, ['-c', PROBE, ...modules], { encoding: 'utf8', timeout: 30_000 });
  let result: Probe | string;
  if (res.error) result = (res.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : res.error.message;
  else if (res.status !== 0)
    result = `does not run (${(res.stderr || res.stdout).trim().split('\n').at(-1) ?? `exit ${res.status}`})`;
  else {
    try {
      result = JSON.parse(res.stdout.trim().split('\n').at(-1)!) as Probe;
    } catch {
      result = `did not answer as Python 3 does (${res.stdout.trim().slice(0, 80)})`;
    }
  }
  probes.set(key, result);
  return result;
}

/** The absolute path of an interpreter that has every module of `need`. */
export function findPython(configured: string, need: PythonNeed): string {
  const wanted = configured.trim();
  const tried: string[] = [];
  for (const command of wanted ? [wanted] : CANDIDATES) {
    const p = probe(command, need.modules);
    if (typeof p === 'string') tried.push(`${command} (${p})`);
    else if (p.version[0] < 3) tried.push(`${command} (Python ${p.version.join('.')}; Python 3 is needed)`);
    else if (p.missing.length) tried.push(`${command} (${p.exe}: no ${p.missing.join(', ')})`);
    else return p.exe;
  }
  const what = need.modules.length ? `Python 3 with ${need.modules.join(' and ')}` : 'Python 3';
  throw new UserError(
    `${need.who} needs ${what}; ${wanted ? `${need.optionKey} names` : 'tried'} ${tried.join('; ')}. ${need.install}${wanted ? `, or correct ${need.optionKey}` : `, or set ${need.optionKey} to an interpreter that has ${need.modules.length ? 'them' : 'it'}`}`,
  );
}

/** Variables passed to a Python program: the interpreter's own settings and the locale, no key of any kind. */
const PASS = [
  'PATH',
  'PYTHONPATH',
  'PYTHONHOME',
  'VIRTUAL_ENV',
  'LD_LIBRARY_PATH',
  'DYLD_LIBRARY_PATH',
  'LANG',
  'LANGUAGE',
  'SYSTEMROOT',
  'SystemRoot',
];

/** What Python needs from the parent environment to start as it does there, and nothing else. */
export function pythonEnvironment(parent: Record<string, string | undefined> = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && (PASS.includes(name) || name.startsWith('LC_'))) env[name] = value;
  }
  return { ...env, PYTHONIOENCODING: 'utf-8', PYTHONDONTWRITEBYTECODE: '1' };
}
