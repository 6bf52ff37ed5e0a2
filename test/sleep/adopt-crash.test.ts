/**
 * An adoption of three documents (two skills, one of them new with its folders, and a project
 * memory file) killed with SIGKILL just before each change it makes to the file system: the
 * lock, the journal, each backup, each replacement, the receipt, the journal's removal. After
 * each kill, the next process that takes the adoption lock finds the files all as they were or
 * all adopted, never a mix, with no backup, folder or journal of an undone attempt left; and
 * adopting again then completes.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { adopt, readReceipt, underAdoptionLock } from '../../src/sleep/adoption/adopt.ts';
import { ROOT, TS_IMPORT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { snapshot, stagedNight, type StagedDoc } from './staged-night.ts';

const HOOK = path.join(ROOT, 'test/helpers/crash-after.mjs');
const CHILD = path.join(ROOT, 'test/sleep/adopt-child.ts');
const SKILL = '---\nname: depot\n---\n\n# Depot\n\nHand-written.\n';
const DOCS: StagedDoc[] = [
  {
    name: 'depot',
    kind: 'skill',
    file: 'skills/depot/SKILL.md',
    live: SKILL,
    proposed: `${SKILL}\n<!-- learned -->\n`,
    mode: 0o640,
  },
  { name: 'fresh', kind: 'skill', file: 'skills/fresh/SKILL.md', proposed: '# fresh\nlearned\n' },
  { name: 'CLAUDE.md', kind: 'memory', file: 'project/CLAUDE.md', live: '# Notes\n', proposed: '# Notes\nlearned\n' },
];

function child(
  root: string,
  stateDir: string,
  night: string,
  env: Record<string, string>,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [...TS_IMPORT, '--import', HOOK, CHILD, stateDir, night], {
      env: { ...process.env, SKILLOPT_TEST_CRASH_ROOT: root, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    p.stderr.on('data', (d) => (stderr += d));
    p.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}

test('an adoption killed at every step leaves the documents all old or all new', async () => {
  const counter = path.join(tmpDir('skillopt-crash-count-'), 'count');
  const probe = stagedNight(DOCS);
  const done = await child(probe.root, probe.stateDir, probe.night, { SKILLOPT_TEST_CRASH_COUNT: counter });
  assert.equal(done.code, 0, done.stderr);
  const steps = Number(fs.readFileSync(counter, 'utf8'));
  assert.ok(steps >= 15, `the adoption makes ${steps} changes`);
  const after = snapshot(probe.paths);
  assert.deepEqual(
    after.map((s) => s?.text),
    DOCS.map((d) => d.proposed),
  );

  const outcomes: string[] = new Array(steps).fill('');
  const crashAt = async (n: number) => {
    const s = stagedNight(DOCS);
    const before = snapshot(s.paths);
    const run = await child(s.root, s.stateDir, s.night, { SKILLOPT_TEST_CRASH_AT: String(n) });
    assert.equal(run.signal, 'SIGKILL', `step ${n}: killed (${run.stderr})`);
    // The next process to take the lock finishes what the killed one left.
    underAdoptionLock(s.stateDir, () => undefined);
    const now = snapshot(s.paths);
    const adopted = readReceipt(s.night).adoptions.length === 1;
    if (adopted) {
      assert.deepEqual(now, after, `step ${n}: committed, so every document is new`);
    } else {
      assert.deepEqual(now, before, `step ${n}: not committed, so every document is as it was`);
      assert.ok(
        !fs.existsSync(path.join(s.night, 'backup')) || fs.readdirSync(path.join(s.night, 'backup')).length === 0,
        `step ${n}: no backup of an undone attempt`,
      );
      assert.ok(!fs.existsSync(path.join(s.root, 'skills/fresh')), `step ${n}: no folder of an undone attempt`);
    }
    assert.ok(!fs.existsSync(path.join(s.stateDir, 'adopt.journal.json')), `step ${n}: the journal is gone`);
    if (!adopted) adopt(s.stateDir, s.night, undefined);
    assert.deepEqual(snapshot(s.paths), after, `step ${n}: adopting again completes`);
    outcomes[n - 1] = adopted ? 'new' : 'old';
  };
  // Two children at a time.
  let next = 1;
  await Promise.all(
    [0, 1].map(async () => {
      while (next <= steps) await crashAt(next++);
    }),
  );
  assert.equal(outcomes[0], 'old');
  assert.equal(
    outcomes.at(-1),
    'new',
    'killed before its last change (the journal removal), the adoption had committed',
  );
  const firstNew = outcomes.indexOf('new');
  assert.ok(
    outcomes.slice(firstNew).every((o) => o === 'new') && outcomes.slice(0, firstNew).every((o) => o === 'old'),
    outcomes.join(' '),
  );
});
