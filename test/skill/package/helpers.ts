/** What the package tests compare: a folder's files and a package's, each path with its bytes and mode. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PackageError } from '../../../src/skill/package/errors.ts';
import { fileBytes, type SkillPackage } from '../../../src/skill/package/package.ts';

export const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/packages');
export const FIXTURE_NAMES = ['pdf-forms', 'sheet-tools', 'poster-design', 'skill-maker'] as const;
export const fixture = (name: string) => path.join(FIXTURES, name);

export interface Listed {
  bytes: Buffer;
  mode: number;
}

/**
 * Every regular file under `dir` by POSIX path, walked without the code under test; `leaveOut`
 * names the top folders a package does not hold (`evals`).
 */
export function folderFiles(dir: string, leaveOut: string[] = []): Map<string, Listed> {
  const out = new Map<string, Listed>();
  const walk = (abs: string, rel: string) => {
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (!rel && leaveOut.includes(entry.name)) continue;
      const full = path.join(abs, entry.name);
      if (entry.isDirectory()) walk(full, relPath);
      else if (entry.isFile()) out.set(relPath, { bytes: fs.readFileSync(full), mode: fs.statSync(full).mode & 0o777 });
    }
  };
  walk(dir, '');
  return out;
}

/** The package's files the same way; `SKILL.md` with the mode of `skillMode` (a package keeps none for it). */
export function packageFiles(pkg: SkillPackage, skillMode = 0o644): Map<string, Listed> {
  const out = new Map<string, Listed>([['SKILL.md', { bytes: Buffer.from(pkg.skill, 'utf8'), mode: skillMode }]]);
  for (const [rel, file] of pkg.files ?? []) out.set(rel, { bytes: Buffer.from(fileBytes(file)), mode: file.mode });
  return out;
}

/** Asserts both listings hold the same paths, and each path the same bytes and mode. */
export function assertSameFiles(actual: Map<string, Listed>, expected: Map<string, Listed>, what: string): void {
  const sorted = (m: Map<string, Listed>) => [...m.keys()].sort();
  if (sorted(actual).join('\n') !== sorted(expected).join('\n'))
    throw new Error(
      `${what}: paths differ\nactual:   ${sorted(actual).join(', ')}\nexpected: ${sorted(expected).join(', ')}`,
    );
  for (const [rel, want] of expected) {
    const got = actual.get(rel)!;
    if (!got.bytes.equals(want.bytes)) throw new Error(`${what}: ${rel} has other bytes`);
    if (got.mode !== want.mode)
      throw new Error(`${what}: ${rel} has mode ${got.mode.toString(8)}, expected ${want.mode.toString(8)}`);
  }
}

/** Copies the fixture `name` into `parent` (as `as`, default its own name) and returns the copy's path. */
export function copyFixture(name: string, parent: string, as = name): string {
  const dest = path.join(parent, as);
  fs.cpSync(fixture(name), dest, { recursive: true, preserveTimestamps: true });
  return dest;
}

/** Asserts `fn` throws a `PackageError` for `problem` whose message matches `message`. */
export function assertProblem(fn: () => unknown, problem: string, message: RegExp): PackageError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof PackageError, `expected a PackageError, got ${String(caught)}`);
  assert.equal(caught.problem, problem, caught.message);
  assert.match(caught.message, message);
  return caught;
}
