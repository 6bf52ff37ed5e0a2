/**
 * A package's own test: `metadata.selftest` in the front matter of `SKILL.md`, a shell command
 * run with `sh -c` in a fresh copy of the package (the working directory), under a time limit
 * that ends its whole process group, with an environment of PATH, LANG, and HOME and TMPDIR in
 * folders of its own (no key or token of the parent's), in a bubblewrap sandbox when one works
 * here (see sandbox.ts). It passes when it exits 0 in time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { runProcess } from '../../../model/harness/process.ts';
import { frontMatter } from '../../regions.ts';
import { writePackageDir } from '../folder.ts';
import type { SkillPackage } from '../package.ts';
import { failed, type PackageCheck, passed } from './record.ts';
import { bubblewrap, type SandboxChoice, sandboxed } from './sandbox.ts';
import { makeWorkDir, removeWorkDir } from './work-dir.ts';

export const SELFTEST_TIMEOUT_MS = 60_000;
/** Output after which a self-test is stopped. */
const MAX_OUTPUT_BYTES = 10 * 1024 * 1024;
/** How much of the end of its output the record keeps. */
const OUTPUT_TAIL_CHARS = 4000;

export type Selftest = { command: string } | { problem: string } | undefined;

/** The self-test `skill` declares, a declaration that is not a command, or undefined for none. */
export function declaredSelftest(skill: string): Selftest {
  const block = frontMatter(skill);
  if (!block) return undefined;
  let data: unknown;
  try {
    data = parseYaml(block.replace(/^\uFEFF?---[^\n]*\n/, '').replace(/(?:---|\.\.\.)[ \t]*(?:\r?\n)?$/, ''));
  } catch {
    return undefined; // the front-matter check says what is wrong with it
  }
  const metadata = (data as { metadata?: unknown } | null)?.metadata;
  if (!metadata || typeof metadata !== 'object' || !('selftest' in metadata)) return undefined;
  const command = (metadata as { selftest: unknown }).selftest;
  if (typeof command === 'string' && command.trim()) return { command };
  return { problem: 'metadata.selftest in SKILL.md must be a shell command (a non-empty string)' };
}

export interface SelftestOptions {
  timeoutMs?: number;
  sandbox?: SandboxChoice;
  signal?: AbortSignal;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
const shown = (command: string) => `\`${command.length > 200 ? `${command.slice(0, 200)}…` : command}\``;

/** Runs `command` on a copy of `pkg`; one record. */
export async function runSelftest(
  pkg: SkillPackage,
  command: string,
  options: SelftestOptions = {},
): Promise<PackageCheck> {
  const timeoutMs = options.timeoutMs ?? SELFTEST_TIMEOUT_MS;
  const choice = options.sandbox ?? 'auto';
  const sandbox = choice === 'none' ? undefined : await bubblewrap();
  if (choice === 'bubblewrap' && !sandbox?.ok)
    return failed(
      'selftest',
      undefined,
      `the self-test is to run in bubblewrap, but ${sandbox?.ok === false ? sandbox.why : 'it is off'}`,
    );
  const where = sandbox?.ok
    ? 'in a bubblewrap sandbox'
    : sandbox
      ? `without a sandbox: ${sandbox.why}`
      : 'without a sandbox';

  const work = makeWorkDir('selftest');
  try {
    const dir = path.join(work, 'package');
    const home = path.join(work, 'home');
    const tmp = path.join(work, 'tmp');
    writePackageDir(dir, pkg);
    fs.mkdirSync(home);
    fs.mkdirSync(tmp);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      TMPDIR: tmp,
      LANG: process.env.LANG ?? 'C.UTF-8',
    };
    const argv = ['sh', '-c', command];
    const run = sandbox?.ok ? sandboxed(work, dir, argv) : { command: argv[0]!, args: argv.slice(1) };
    const res = await runProcess({
      ...run,
      cwd: dir,
      env,
      timeoutMs,
      maxOutputBytes: MAX_OUTPUT_BYTES,
      signal: options.signal,
    });
    if (res.aborted) throw options.signal?.reason ?? new Error('the self-test was stopped');
    const printed = [res.lines.join('\n'), res.stderr].filter((s) => s.trim()).join('\n');
    const output = printed.length > OUTPUT_TAIL_CHARS ? `…${printed.slice(-OUTPUT_TAIL_CHARS)}` : printed;
    const what = `the self-test ${shown(command)}`;
    const fail = (why: string) => ({ ...failed('selftest', undefined, `${what} ${why} (${where})`), output });
    if (res.spawnError)
      return fail(
        res.spawnError.code === 'ENOENT'
          ? `could not start: ${run.command} not found`
          : `could not start (${res.spawnError.message})`,
      );
    if (res.timedOut) return fail(`did not finish within ${seconds(timeoutMs)} and was stopped`);
    if (res.overflowed) return fail(`printed more than ${MAX_OUTPUT_BYTES / 1024 / 1024} MB and was stopped`);
    if (res.signal) return fail(`was ended by ${res.signal} after ${seconds(res.durationMs)}`);
    if (res.exitCode !== 0) return fail(`failed with exit code ${res.exitCode} after ${seconds(res.durationMs)}`);
    return { ...passed('selftest', undefined, `${what} passed in ${seconds(res.durationMs)} (${where})`), output };
  } finally {
    removeWorkDir(work);
  }
}
