/**
 * The package's scripts are well formed, checked by the tools that run them, on a copy of the
 * package written to a temp folder: Python files compile (`py_compile`, all files in one
 * `python3` process, the bytecode written into the temp folder and gone with it), JavaScript
 * passes `node --check`, shell scripts pass `bash -n`. A script is told by its extension, or,
 * without one of these, by its shebang line. Nothing is run: these tools only parse. A tool that
 * is missing fails the check by name; it never lets a script through unchecked.
 */
import { posix } from 'node:path';
import type { LimitFunction } from 'p-limit';
import { type ProcessResult, runProcess } from '../../../model/harness/process.ts';
import type { PackageFile, PackageFiles } from '../package.ts';
import { failed, type PackageCheck, passed } from './record.ts';

export type ScriptLanguage = 'python' | 'javascript' | 'shell';

const EXTENSIONS: [RegExp, ScriptLanguage][] = [
  [/\.py$/i, 'python'],
  [/\.[cm]?js$/i, 'javascript'],
  [/\.(sh|bash)$/i, 'shell'],
];

/** The interpreter a shebang line names (`#!/usr/bin/env -S python3 -u` names `python3`). */
function shebangCommand(text: string): string | undefined {
  const m = /^#![ \t]*(\S+)(.*)/.exec(text);
  if (!m) return undefined;
  const command = posix.basename(m[1]!);
  if (command !== 'env') return command;
  return m[2]!
    .trim()
    .split(/\s+/)
    .find((word) => word && !word.startsWith('-') && !word.includes('='));
}

/** The language a package file is a script in, if it is one. */
export function scriptLanguage(path: string, file: PackageFile): ScriptLanguage | undefined {
  for (const [pattern, language] of EXTENSIONS) if (pattern.test(path)) return language;
  if (file.kind !== 'text') return undefined;
  const command = shebangCommand(file.text);
  if (!command) return undefined;
  if (/^python[\d.]*$/.test(command)) return 'python';
  if (command === 'node' || command === 'nodejs') return 'javascript';
  if (command === 'bash' || command === 'sh') return 'shell';
  return undefined;
}

/** The commands the checks run. */
export interface CheckTools {
  python: string;
  node: string;
  bash: string;
}

export const DEFAULT_TOOLS: CheckTools = { python: 'python3', node: process.execPath, bash: 'bash' };

/** Where and how the checks run. */
export interface ScriptContext {
  /** The written copy of the package; scripts are named by their package paths inside it. */
  dir: string;
  /** A file the compiled Python is written to, outside the copy. */
  bytecode: string;
  tools: CheckTools;
  /** Bounds how many checking processes run at once. */
  limit: LimitFunction;
  signal?: AbortSignal;
}

/** A check that runs for longer has hung. */
const TOOL_TIMEOUT_MS = 60_000;
/** Longest error text kept from a tool. */
const MESSAGE_CHARS = 600;

/**
 * What a parsing tool gets from the parent environment: where programs are and the locale, and
 * nothing that could make it run code (NODE_OPTIONS, BASH_ENV, PYTHONSTARTUP) or read a key.
 */
function toolEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  if (process.env.PATH !== undefined) env.PATH = process.env.PATH;
  if (process.env.LANG !== undefined) env.LANG = process.env.LANG;
  return env;
}

async function runTool(
  ctx: ScriptContext,
  command: string,
  args: string[],
  env: Record<string, string>,
  stdin?: string,
): Promise<ProcessResult> {
  const res = await ctx.limit(() =>
    runProcess({ command, args, cwd: ctx.dir, env, stdin, timeoutMs: TOOL_TIMEOUT_MS, signal: ctx.signal }),
  );
  if (res.aborted) throw ctx.signal?.reason ?? new Error('the package check was stopped');
  return res;
}

/** Why a tool run could not check `path`, or undefined when it ran to its end. */
function toolFailure(res: ProcessResult, command: string, path: string): string | undefined {
  if (res.spawnError?.code === 'ENOENT') return `${command} not found: cannot check ${path}`;
  if (res.spawnError) return `${command} could not be started (${res.spawnError.message}): cannot check ${path}`;
  if (res.timedOut) return `${command} did not finish within ${TOOL_TIMEOUT_MS / 1000} s: cannot check ${path}`;
  if (res.signal) return `${command} was ended by ${res.signal}: cannot check ${path}`;
  return undefined;
}

const clip = (text: string) => (text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS)}…` : text);

/** Checks every Python file of `paths` in one `python3`: one record each. */
const PY_COMPILE = `
import json, py_compile, sys
job = json.load(sys.stdin)
for path in job["files"]:
    try:
        py_compile.compile(path, cfile=job["bytecode"], dfile=path, doraise=True)
        report = {"file": path}
    except py_compile.PyCompileError as e:
        v = e.exc_value
        report = {"file": path, "line": getattr(v, "lineno", None),
                  "error": e.exc_type_name + ": " + str(getattr(v, "msg", None) or v)}
    except Exception as e:
        report = {"file": path, "error": type(e).__name__ + ": " + str(e)}
    print(json.dumps(report), flush=True)
`;

export async function checkPython(paths: string[], ctx: ScriptContext): Promise<PackageCheck[]> {
  const { python } = ctx.tools;
  const res = await runTool(
    ctx,
    python,
    ['-B', '-c', PY_COMPILE],
    { ...toolEnvironment(), PYTHONIOENCODING: 'utf-8' },
    JSON.stringify({ files: paths, bytecode: ctx.bytecode }),
  );
  const reports = new Map<string, { line?: number | null; error?: string }>();
  for (const line of res.lines) {
    try {
      const report = JSON.parse(line) as { file: string; line?: number | null; error?: string };
      reports.set(report.file, report);
    } catch {
      // not a report: something the interpreter printed at start
    }
  }
  return paths.map((path) => {
    const report = reports.get(path);
    if (!report) {
      const why = toolFailure(res, python, path);
      const said = res.stderr.trim().split('\n').at(-1);
      return failed(
        'python',
        path,
        why ?? `${python} stopped before it checked ${path}${said ? `: ${clip(said)}` : ''}`,
      );
    }
    if (report.error === undefined) return passed('python', path, `${path} compiles (py_compile)`);
    const at = typeof report.line === 'number' ? `line ${report.line}: ` : '';
    return failed('python', path, `${path} does not compile: ${at}${clip(report.error)}`);
  });
}

/** `line 2: SyntaxError: Unexpected token ';'` from what `node --check` printed. */
function nodeError(stderr: string): string {
  const line = /^.*:(\d+)\r?$/m.exec(stderr)?.[1];
  const error = /^(\w*Error\b.*)$/m.exec(stderr)?.[1] ?? stderr.trim().split('\n')[0] ?? 'no reason given';
  return clip(`${line ? `line ${line}: ` : ''}${error}`);
}

/** The `type` of the package.json nearest to `path` inside the package: how Node reads a `.js` file. */
export function moduleType(path: string, files: PackageFiles): string | undefined {
  for (let dir = posix.dirname(path); ; dir = posix.dirname(dir)) {
    const manifest = files.get(dir === '.' ? 'package.json' : `${dir}/package.json`);
    if (manifest) {
      if (manifest.kind !== 'text') return undefined;
      try {
        const type = (JSON.parse(manifest.text) as { type?: unknown }).type;
        return typeof type === 'string' ? type : undefined;
      } catch {
        return undefined; // the JSON check reports it
      }
    }
    if (dir === '.') return undefined;
  }
}

/** Node tells a `.js` file with `import` or `export` for an ES module when nothing says which it is. */
const DETECTS_MODULES = process.allowedNodeEnvironmentFlags.has('--experimental-detect-module');

/**
 * `node --check` on `path`. A `.js` file that no package.json gives a `type` is read by Node as
 * CommonJS, or as an ES module when it does not parse as CommonJS; `node --check` then passes an
 * ES module with a syntax error, so each reading is checked on its own (the module from `text`).
 */
export async function checkJavaScript(
  path: string,
  text: string | undefined,
  ctx: ScriptContext,
  type?: string,
): Promise<PackageCheck> {
  const { node } = ctx.tools;
  const attempt = async (args: string[], stdin?: string) => {
    const res = await runTool(ctx, node, args, toolEnvironment(), stdin);
    const cannot = toolFailure(res, node, path);
    return { cannot, error: cannot || res.exitCode === 0 ? undefined : nodeError(res.stderr) };
  };
  const ambiguous = DETECTS_MODULES && /\.js$/i.test(path) && type === undefined && text !== undefined;
  const script = await attempt(ambiguous ? ['--no-experimental-detect-module', '--check', path] : ['--check', path]);
  if (script.cannot) return failed('javascript', path, script.cannot);
  if (!script.error)
    return passed('javascript', path, `${path} passes node --check${ambiguous ? ' (as CommonJS)' : ''}`);
  if (!ambiguous) return failed('javascript', path, `${path} fails node --check: ${script.error}`);
  const module = await attempt(['--input-type=module', '--check'], text);
  if (module.cannot) return failed('javascript', path, module.cannot);
  if (!module.error) return passed('javascript', path, `${path} passes node --check (as an ES module)`);
  return failed(
    'javascript',
    path,
    `${path} fails node --check as CommonJS (${script.error}) and as an ES module (${module.error})`,
  );
}

export async function checkShell(path: string, ctx: ScriptContext): Promise<PackageCheck> {
  const { bash } = ctx.tools;
  const res = await runTool(ctx, bash, ['-n', path], toolEnvironment());
  const why = toolFailure(res, bash, path);
  if (why) return failed('shell', path, why);
  if (res.exitCode === 0) return passed('shell', path, `${path} passes bash -n`);
  const said = res.stderr
    .trim()
    .split('\n')
    .map((l) => (l.startsWith(`${path}: `) ? l.slice(path.length + 2) : l))
    .join('; ');
  return failed('shell', path, `${path} fails bash -n: ${clip(said || `exit code ${res.exitCode}`)}`);
}
