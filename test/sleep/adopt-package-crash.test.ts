/**
 * The adoption of a skill package with a memory file beside it, and its rollback, killed with
 * SIGKILL just before each change either makes to the file system (the lock, the journal, each
 * backup, each file replaced, added or removed, each mode, the receipt, the journal's removal):
 * the next process to take the adoption lock finds the package and the memory file all as they
 * were or all adopted, byte for byte with their modes, never a mix; and the rollback then
 * restores the package folder byte for byte.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { adopt, readReceipt, rollback, underAdoptionLock } from '../../src/sleep/adoption/adopt.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { expectedTree, filesOf, NEW_PACKAGE, OLD_PACKAGE, type Tree, tree } from '../deploy/package-fixture.ts';
import { MEMORY, stagedPackageNight } from './staged-package.ts';
import { killMoments } from '../helpers/kill-moments.ts';

const HOOK = path.join(ROOT, 'test/helpers/crash-after.mjs');
const PROPOSED: Tree = { ...NEW_PACKAGE, 'templates/letter/form.txt': 'Dear {name},\n' };
const PYC = 'scripts/__pycache__/check_fields.cpython-312.pyc';
const ADOPTED = expectedTree({ ...PROPOSED, [PYC]: OLD_PACKAGE[PYC]! });

function child(
  script: 'adopt-child.ts' | 'rollback-child.ts',
  args: string[],
  root: string,
  env: Record<string, string>,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', HOOK, path.join(ROOT, 'test/sleep', script), ...args],
      {
        env: { ...process.env, SKILLOPT_TEST_CRASH_ROOT: root, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    p.stderr.on('data', (d) => (stderr += d));
    p.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}

/** 'old' or 'new': the package and the memory file after the kill was settled; fails on a mix. */
function state(
  s: ReturnType<typeof stagedPackageNight>,
  old: Record<string, string> | null,
  step: number,
): 'old' | 'new' {
  const memory = fs.readFileSync(s.memory, 'utf8');
  const now = tree(s.liveDir);
  if (memory === MEMORY.proposed) {
    assert.deepEqual(
      filesOf(now),
      ADOPTED,
      `step ${step}: the memory file is adopted, so is every file of the package`,
    );
    return 'new';
  }
  assert.equal(memory, MEMORY.live, `step ${step}`);
  assert.deepEqual(now, old, `step ${step}: the memory file is as it was, so is the package, byte for byte`);
  return 'old';
}

async function stepsOf(script: 'adopt-child.ts' | 'rollback-child.ts', adopted: boolean): Promise<number> {
  const counter = path.join(tmpDir('skillopt-crash-count-'), 'count');
  const s = stagedPackageNight(OLD_PACKAGE, PROPOSED);
  if (adopted) adopt(s.stateDir, s.night, undefined);
  const args = script === 'adopt-child.ts' ? [s.stateDir, s.night] : [s.stateDir];
  const done = await child(script, args, s.root, { SKILLOPT_TEST_CRASH_COUNT: counter });
  assert.equal(done.code, 0, done.stderr);
  return Number(fs.readFileSync(counter, 'utf8'));
}

/** Runs `crashAt(n)` for each kill moment of 1..steps (see `killMoments`), two children at a time; returns the outcomes in step order. */
async function atEveryStep(
  t: TestContext,
  steps: number,
  crashAt: (n: number) => Promise<'old' | 'new'>,
): Promise<string[]> {
  const outcomes: string[] = new Array(steps).fill('');
  const moments = killMoments(t, steps);
  await Promise.all(
    [0, 1].map(async () => {
      for (let n = moments.shift(); n !== undefined; n = moments.shift()) outcomes[n - 1] = await crashAt(n);
    }),
  );
  return outcomes.filter(Boolean);
}

const monotonic = (outcomes: string[], first: string) => {
  const flip = outcomes.findIndex((o) => o !== first);
  return flip === -1 || outcomes.slice(flip).every((o) => o !== first);
};

test('a package adoption killed at any step leaves the package and the memory file all old or all new', async (t) => {
  const steps = await stepsOf('adopt-child.ts', false);
  assert.ok(steps >= 20, `the adoption makes ${steps} changes`);
  const outcomes = await atEveryStep(t, steps, async (n) => {
    const s = stagedPackageNight(OLD_PACKAGE, PROPOSED);
    const old = tree(s.liveDir);
    const run = await child('adopt-child.ts', [s.stateDir, s.night], s.root, { SKILLOPT_TEST_CRASH_AT: String(n) });
    assert.equal(run.signal, 'SIGKILL', `step ${n}: killed (${run.stderr})`);
    underAdoptionLock(s.stateDir, () => undefined);
    const outcome = state(s, old, n);
    assert.equal(readReceipt(s.night).adoptions.length === 1, outcome === 'new', `step ${n}: the receipt agrees`);
    assert.ok(!fs.existsSync(path.join(s.stateDir, 'adopt.journal.json')), `step ${n}: the journal is gone`);
    if (outcome === 'old') {
      assert.ok(
        !fs.existsSync(path.join(s.night, 'backup', 'skill-pdf-forms', 'SKILL.md')),
        `step ${n}: no backup of an undone attempt`,
      );
      adopt(s.stateDir, s.night, undefined);
    }
    assert.deepEqual(filesOf(tree(s.liveDir)), ADOPTED, `step ${n}: adopting again completes`);
    rollback(s.stateDir, undefined);
    assert.deepEqual(tree(s.liveDir), old, `step ${n}: rolled back, byte for byte`);
    return outcome;
  });
  assert.equal(outcomes[0], 'old');
  assert.equal(
    outcomes.at(-1),
    'new',
    'killed before its last change (the journal removal), the adoption had committed',
  );
  assert.ok(monotonic(outcomes, 'old'), outcomes.join(' '));
});

test('a package rollback killed at any step leaves it all adopted or all restored, byte for byte', async (t) => {
  const steps = await stepsOf('rollback-child.ts', true);
  const outcomes = await atEveryStep(t, steps, async (n) => {
    const s = stagedPackageNight(OLD_PACKAGE, PROPOSED);
    const old = tree(s.liveDir);
    adopt(s.stateDir, s.night, undefined);
    const run = await child('rollback-child.ts', [s.stateDir], s.root, { SKILLOPT_TEST_CRASH_AT: String(n) });
    assert.equal(run.signal, 'SIGKILL', `step ${n}: killed (${run.stderr})`);
    underAdoptionLock(s.stateDir, () => undefined);
    const outcome = state(s, old, n);
    const rolledBack = readReceipt(s.night).adoptions[0]!.rolled_back !== undefined;
    assert.equal(rolledBack, outcome === 'old', `step ${n}: the receipt agrees`);
    if (outcome === 'new') rollback(s.stateDir, undefined);
    assert.deepEqual(tree(s.liveDir), old, `step ${n}: rolled back, byte for byte`);
    return outcome;
  });
  assert.equal(outcomes[0], 'new');
  assert.equal(outcomes.at(-1), 'old');
  assert.ok(monotonic(outcomes, 'new'), outcomes.join(' '));
});
