/**
 * A package deployment, and its rollback, killed with SIGKILL just before each change it makes
 * to the project (the lock, the marker, each staged file and mode, the record, each rename, the
 * marker's removal): the next command to touch the skill (`--status`, a deploy or a rollback, in
 * turn) finds the skill's folder byte for byte the old one or the new one, never a mix, and
 * nothing of an undone attempt left; the old folder still comes back byte for byte after.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { deploySkill, rollbackSkill } from '../../src/deploy/deploy.ts';
import { deployStatus } from '../../src/deploy/status.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { killMoments } from '../helpers/kill-moments.ts';
import {
  expectedTree,
  filesOf,
  NEW_PACKAGE,
  OLD_PACKAGE,
  packageRun,
  type Tree,
  tree,
  writeTree,
} from './package-fixture.ts';

const HOOK = path.join(ROOT, 'test/helpers/crash-after.mjs');
const CHILD = path.join(ROOT, 'test/deploy/deploy-child.ts');
const SKILL_DIR = '.claude/skills/pdf-forms';
const JOURNAL_DIR = '.claude/skills/.skillopt-deploy/pdf-forms';
const scope = (project: string) => ({ agent: 'claude' as const, scope: { project } });

function child(
  op: 'deploy' | 'rollback',
  run: string,
  project: string,
  env: Record<string, string>,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', '--import', HOOK, CHILD, op, run, project], {
      env: { ...process.env, SKILLOPT_TEST_CRASH_ROOT: project, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    p.stderr.on('data', (d) => (stderr += d));
    p.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}

/** A project holding the old package (or nothing), deployed over once already when `deployed`. */
function project(withOld: boolean, deployedRun?: string): string {
  const dir = fs.realpathSync(tmpDir('skillopt-deploy-crash-'));
  if (withOld) writeTree(path.join(dir, SKILL_DIR), OLD_PACKAGE);
  if (deployedRun) deploySkill({ run: deployedRun, ...scope(dir) });
  return dir;
}

/** How many changes the operation makes: it runs once to the end, counted. */
async function stepsOf(op: 'deploy' | 'rollback', run: string, dir: string): Promise<number> {
  const counter = path.join(tmpDir('skillopt-crash-count-'), 'count');
  const done = await child(op, run, dir, { SKILLOPT_TEST_CRASH_COUNT: counter });
  assert.equal(done.code, 0, done.stderr);
  return Number(fs.readFileSync(counter, 'utf8'));
}

/** Runs `crashAt(n)` for each kill moment of 1..steps (see `killMoments`), two children at a time. */
async function atEveryStep(t: TestContext, steps: number, crashAt: (n: number) => Promise<void>): Promise<void> {
  const moments = killMoments(t, steps);
  await Promise.all(
    [0, 1].map(async () => {
      for (let n = moments.shift(); n !== undefined; n = moments.shift()) await crashAt(n);
    }),
  );
}

/** 'old' or 'new': what the skill's folder holds once the kill was settled; fails on anything else. */
function settled(
  step: number,
  dir: string,
  old: Record<string, string> | null,
  pkg: Tree = NEW_PACKAGE,
): 'old' | 'new' {
  const now = tree(path.join(dir, SKILL_DIR));
  const journal = path.join(dir, JOURNAL_DIR);
  if (now && JSON.stringify(filesOf(now)) === JSON.stringify(expectedTree(pkg))) {
    // The new package is there, with the record of its deployment and nothing else of the swap.
    assert.deepEqual(fs.readdirSync(journal), ['0001'], `step ${step}: no marker, lock or leftover beside the record`);
    assert.deepEqual(
      fs.readdirSync(path.join(journal, '0001')).sort(),
      old ? ['deploy.json', 'previous'] : ['deploy.json'],
      `step ${step}: the record and the old folder`,
    );
    if (old)
      assert.deepEqual(
        tree(path.join(journal, '0001/previous')),
        old,
        `step ${step}: the old folder is kept as it was`,
      );
    return 'new';
  }
  assert.deepEqual(now, old, `step ${step}: neither the new package nor the old folder`);
  assert.ok(!fs.existsSync(path.join(dir, JOURNAL_DIR, '..')), `step ${step}: no record, lock or leftover of the swap`);
  return 'old';
}

test('a package deployment killed at any step leaves the old folder or the new package', async (t) => {
  const run = packageRun(NEW_PACKAGE);
  const steps = await stepsOf('deploy', run, project(true));
  assert.ok(steps >= 25, `the deployment makes ${steps} changes`);
  const outcomes: string[] = new Array(steps).fill('');
  await atEveryStep(t, steps, async (n) => {
    const dir = project(true);
    const initial = tree(dir);
    const old = tree(path.join(dir, SKILL_DIR));
    const killed = await child('deploy', run, dir, { SKILLOPT_TEST_CRASH_AT: String(n) });
    assert.equal(killed.signal, 'SIGKILL', `step ${n}: killed (${killed.stderr})`);
    // The first and the last kill are settled by status, so that what they left is seen.
    const next = n === 1 || n === steps ? 'status' : (['status', 'deploy', 'rollback'] as const)[n % 3]!;
    if (next === 'status') {
      deployStatus(scope(dir));
      outcomes[n - 1] = settled(n, dir, old);
      if (outcomes[n - 1] === 'old') assert.deepEqual(tree(dir), initial, `step ${n}: nothing of the attempt is left`);
      deploySkill({ run, ...scope(dir) });
    } else if (next === 'deploy') {
      deploySkill({ run, ...scope(dir) });
      assert.equal(settled(n, dir, old), 'new', `step ${n}: the next deployment completes`);
    } else {
      try {
        rollbackSkill(scope(dir));
      } catch (err) {
        // The interrupted deployment was undone: there was nothing left to roll back.
        assert.match((err as Error).message, /nothing to roll back/, `step ${n}`);
      }
      assert.deepEqual(tree(dir), initial, `step ${n}: the rollback leaves the old folder byte for byte`);
      return;
    }
    rollbackSkill(scope(dir));
    assert.deepEqual(tree(dir), initial, `step ${n}: rolled back, the old folder is back byte for byte`);
  });
  const seen = outcomes.filter(Boolean);
  assert.equal(seen[0], 'old');
  assert.ok(seen.includes('new'), seen.join(' '));
  const firstNew = seen.indexOf('new');
  assert.ok(
    seen.slice(firstNew).every((o) => o === 'new'),
    `once committed, always new: ${seen.join(' ')}`,
  );
});

test('a deployment into a project without the skill, killed at any step, leaves nothing or the new package', async (t) => {
  const small: Tree = {
    'SKILL.md': NEW_PACKAGE['SKILL.md']!,
    'scripts/check_fields.py': NEW_PACKAGE['scripts/check_fields.py']!,
    'assets/logo.png': NEW_PACKAGE['assets/logo.png']!,
  };
  const run = packageRun(small);
  const steps = await stepsOf('deploy', run, project(false));
  await atEveryStep(t, steps, async (n) => {
    const dir = project(false);
    const killed = await child('deploy', run, dir, { SKILLOPT_TEST_CRASH_AT: String(n) });
    assert.equal(killed.signal, 'SIGKILL', `step ${n}: killed (${killed.stderr})`);
    deployStatus(scope(dir));
    if (settled(n, dir, null, small) === 'old') {
      // Killed before its first record, a deployment may leave the skills folder it was making, empty.
      assert.deepEqual(filesOf(tree(dir)), {}, `step ${n}: no file is left`);
    } else {
      rollbackSkill(scope(dir));
      assert.deepEqual(fs.readdirSync(dir), [], `step ${n}: rolled back, the project is empty`);
    }
  });
});

test('a rollback killed at any step leaves the deployed package or the old folder', async (t) => {
  const run = packageRun(NEW_PACKAGE);
  const steps = await stepsOf('rollback', run, project(true, run));
  assert.ok(steps >= 6, `the rollback makes ${steps} changes`);
  const outcomes: string[] = new Array(steps).fill('');
  await atEveryStep(t, steps, async (n) => {
    const before = project(true);
    const old = tree(path.join(before, SKILL_DIR));
    const dir = project(true, run);
    const killed = await child('rollback', run, dir, { SKILLOPT_TEST_CRASH_AT: String(n) });
    assert.equal(killed.signal, 'SIGKILL', `step ${n}: killed (${killed.stderr})`);
    // The first and the last kill are settled by status, so that what they left is seen.
    const next = n === 1 || n === steps ? 'status' : (['status', 'deploy', 'rollback'] as const)[n % 3]!;
    if (next === 'status') {
      deployStatus(scope(dir));
      outcomes[n - 1] = settled(n, dir, old);
      if (outcomes[n - 1] === 'new') rollbackSkill(scope(dir));
    } else if (next === 'deploy') {
      deploySkill({ run, ...scope(dir) });
      assert.equal(settled(n, dir, old), 'new', `step ${n}`);
      rollbackSkill(scope(dir));
    } else {
      try {
        rollbackSkill(scope(dir));
      } catch (err) {
        // The interrupted rollback had committed: it was finished, and there was nothing more to roll back.
        assert.match((err as Error).message, /nothing to roll back/, `step ${n}`);
      }
    }
    // tmp folder names differ: compare the skills folder, where the old package lives.
    assert.deepEqual(
      tree(path.join(dir, '.claude')),
      tree(path.join(before, '.claude')),
      `step ${n}: the old folder is back`,
    );
  });
  const seen = outcomes.filter(Boolean);
  assert.equal(seen[0], 'new', 'killed at once, the rollback had not begun');
  assert.equal(seen.at(-1), 'old', 'killed at its last change, the rollback had committed');
  const firstOld = seen.indexOf('old');
  assert.ok(
    seen.slice(firstOld).every((o) => o === 'old'),
    seen.join(' '),
  );
});
