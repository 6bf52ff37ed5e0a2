/**
 * The checks a candidate package passes before any rollout, so that a broken package is
 * rejected with the reason instead of scored: its front matter keeps the Agent Skills rules,
 * its Markdown links name files it holds, its JSON and YAML parse, its scripts are well formed
 * (Python, JavaScript, shell), and its own self-test, when it declares one, passes.
 *
 * A plain document (a `SKILL.md` without front matter and without other files, as skills were
 * trained before packages) is held to none of the package rules: it is a document, not a skill
 * folder. Once it has front matter or files, every check applies.
 *
 * The checks run concurrently; a package without scripts or self-test starts no process.
 */
import os from 'node:os';
import path from 'node:path';
import pLimit from 'p-limit';
import { frontMatterProblems } from '../agent-skill.ts';
import { frontMatter } from '../regions.ts';
import { writePackageDir } from './folder.ts';
import {
  hasFiles,
  type PackageFile,
  type PackageFiles,
  packagePathProblem,
  type SkillPackage,
  SKILL_FILE,
} from './package.ts';
import { checkData, dataFormat } from './checks/data.ts';
import { checkLinks, isMarkdown } from './checks/links.ts';
import { CHECK_NAMES, failed, type PackageCheck, type PackageValidation, passed } from './checks/record.ts';
import type { SandboxChoice } from './checks/sandbox.ts';
import {
  type CheckTools,
  checkJavaScript,
  checkPython,
  checkShell,
  DEFAULT_TOOLS,
  moduleType,
  type ScriptContext,
  type ScriptLanguage,
  scriptLanguage,
} from './checks/scripts.ts';
import { declaredSelftest, runSelftest, SELFTEST_TIMEOUT_MS } from './checks/selftest.ts';
import { makeWorkDir, removeWorkDir } from './checks/work-dir.ts';

export {
  CHECK_NAMES,
  type PackageCheck,
  packageCheckSchema,
  type PackageValidation,
  packageValidationSchema,
} from './checks/record.ts';
export type { SandboxChoice } from './checks/sandbox.ts';
export type { CheckTools } from './checks/scripts.ts';
export { SELFTEST_TIMEOUT_MS } from './checks/selftest.ts';

export interface ValidateOptions {
  /** The self-test's time limit, in ms (default 60 s). */
  selftestTimeoutMs?: number;
  /** Where the self-test runs (default `auto`: in bubblewrap when it works here). */
  sandbox?: SandboxChoice;
  /** The commands that check scripts (default `python3`, this Node, `bash`). */
  tools?: Partial<CheckTools>;
  /** Stops the checks; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Whether the package is held to the package rules (see the top of this file). */
export function isPlainDocument(pkg: SkillPackage): boolean {
  return !hasFiles(pkg) && frontMatter(pkg.skill) === '';
}

function frontMatterCheck(skill: string): PackageCheck {
  const problems = frontMatterProblems(skill);
  return problems.length
    ? failed(
        'front-matter',
        SKILL_FILE,
        `${SKILL_FILE}'s front matter breaks the Agent Skills rules: ${problems.join('; ')}`,
      )
    : passed('front-matter', SKILL_FILE, `${SKILL_FILE}'s front matter keeps the Agent Skills rules`);
}

/** The scripts' checks, on a copy of the scripts (and the package.json files that say how Node reads them). */
async function scriptChecks(
  pkg: SkillPackage & { files: PackageFiles },
  scripts: [string, PackageFile, ScriptLanguage][],
  options: ValidateOptions,
): Promise<PackageCheck[]> {
  const files: PackageFiles = pkg.files;
  const copied = new Map(scripts.map(([path, file]) => [path, file] as const));
  for (const [path, file] of files)
    if (path === 'package.json' || path.endsWith('/package.json')) copied.set(path, file);
  const work = makeWorkDir('check');
  try {
    const dir = path.join(work, 'package');
    writePackageDir(dir, { skill: '', files: copied });
    const ctx: ScriptContext = {
      dir,
      bytecode: path.join(work, 'bytecode.pyc'),
      tools: { ...DEFAULT_TOOLS, ...options.tools },
      limit: pLimit(Math.max(2, os.availableParallelism())),
      signal: options.signal,
    };
    const python = scripts.filter(([, , language]) => language === 'python').map(([path]) => path);
    const pending: Promise<PackageCheck | PackageCheck[]>[] = python.length ? [checkPython(python, ctx)] : [];
    for (const [path, file, language] of scripts) {
      if (language === 'javascript')
        pending.push(checkJavaScript(path, file.kind === 'text' ? file.text : undefined, ctx, moduleType(path, files)));
      if (language === 'shell') pending.push(checkShell(path, ctx));
    }
    return (await settled(pending)).flat();
  } finally {
    removeWorkDir(work);
  }
}

/** Every promise's value, once all have ended (so nothing still runs in a folder about to go); the first failure if any. */
async function settled<T>(pending: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(pending);
  const failure = results.find((r) => r.status === 'rejected');
  if (failure) throw failure.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** Checks `pkg`; `ok` when every check passed. */
export async function validatePackage(pkg: SkillPackage, options: ValidateOptions = {}): Promise<PackageValidation> {
  options.signal?.throwIfAborted();
  if (isPlainDocument(pkg)) return { ok: true, checks: [] };
  const checks: PackageCheck[] = [frontMatterCheck(pkg.skill)];
  // A file whose path leaves the package is reported, and neither written anywhere nor checked further.
  const files = new Map<string, PackageFile>();
  for (const [name, file] of pkg.files ?? []) {
    const problem = packagePathProblem(name);
    if (problem) checks.push(failed('path', name, `the package holds a file at a path it may not have: ${problem}`));
    else files.set(name, file);
  }
  const safe = { skill: pkg.skill, files };
  const entries: [string, PackageFile][] = [
    [SKILL_FILE, { kind: 'text', text: pkg.skill, mode: 0o644 }],
    ...[...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ];
  const scripts: [string, PackageFile, ScriptLanguage][] = [];
  for (const [path, file] of entries) {
    if (isMarkdown(path) && file.kind === 'text') checks.push(checkLinks(path, file.text, files));
    const format = dataFormat(path);
    if (format) checks.push(checkData(path, file, format));
    const language = scriptLanguage(path, file);
    if (language) scripts.push([path, file, language]);
  }
  const pending: Promise<PackageCheck[]>[] = [];
  if (scripts.length) pending.push(scriptChecks(safe, scripts, options));
  const selftest = declaredSelftest(pkg.skill);
  if (selftest && 'problem' in selftest) checks.push(failed('selftest', undefined, selftest.problem));
  else if (selftest)
    pending.push(
      runSelftest(safe, selftest.command, {
        timeoutMs: options.selftestTimeoutMs ?? SELFTEST_TIMEOUT_MS,
        sandbox: options.sandbox,
        signal: options.signal,
      }).then((check) => [check]),
    );
  checks.push(...(await settled(pending)).flat());

  // Paths the package may not have first, then SKILL.md's checks, each file's by path, the self-test last.
  const order = new Map(entries.map(([path], i) => [path, i]));
  const rank = (c: PackageCheck) => [
    c.file === undefined ? entries.length : (order.get(c.file) ?? -1),
    CHECK_NAMES.indexOf(c.check),
  ];
  checks.sort((a, b) => {
    const [fa, ca] = rank(a);
    const [fb, cb] = rank(b);
    return fa! - fb! || ca! - cb!;
  });
  return { ok: checks.every((c) => c.ok), checks };
}

/** Why a validation failed, one clause per failed check; undefined when it passed. */
export function validationFailure(validation: PackageValidation): string | undefined {
  const failures = validation.checks.filter((c) => !c.ok).map((c) => c.message);
  return failures.length ? failures.join('; ') : undefined;
}
