import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { activityDir, describeActivity, markActivity, runningActivities } from '../../src/run/activity.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('a running process is seen through its marker until it releases it; the marker of a process gone is ignored and removed', () => {
  const folder = path.join(tmpDir(), 'running');
  const mark = markActivity('train', '/runs/sim/a', () => assert.fail('no warning'), folder);
  const [seen] = runningActivities(folder);
  assert.equal(seen?.kind, 'train');
  assert.equal(seen?.owner.pid, process.pid);
  assert.equal(describeActivity(seen!), 'a training run was going: /runs/sim/a');

  // The same marker, as a process that has exited since would have left it.
  const [name] = fs.readdirSync(folder);
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  const marker = JSON.parse(fs.readFileSync(path.join(folder, name!), 'utf8'));
  const stale = path.join(folder, `eval-${gone}-0badc0de.json`);
  fs.writeFileSync(stale, JSON.stringify({ ...marker, kind: 'eval', owner: { ...marker.owner, pid: gone } }));
  assert.deepEqual(
    runningActivities(folder).map((a) => a.owner.pid),
    [process.pid],
  );
  assert.equal(fs.existsSync(stale), false, 'the stale marker is removed');

  mark.release();
  assert.deepEqual(runningActivities(folder), []);
  assert.deepEqual(fs.readdirSync(folder), []);

  // A process killed before it removed its marker: the next process to mark itself removes it.
  fs.writeFileSync(stale, JSON.stringify({ ...marker, kind: 'eval', owner: { ...marker.owner, pid: gone } }));
  const next = markActivity('train', '/runs/sim/b', () => assert.fail('no warning'), folder);
  assert.equal(fs.existsSync(stale), false, 'the stale marker is removed by the next process to mark itself');
  next.release();
});

test('a marker that cannot be written does not stop the work: one warning, naming the place', () => {
  const parent = tmpDir();
  fs.writeFileSync(path.join(parent, 'not-a-folder'), '');
  const warnings: string[] = [];
  for (let i = 0; i < 2; i++)
    markActivity('eval', '/runs/e', (m) => warnings.push(m), path.join(parent, 'not-a-folder', 'running')).release();
  assert.equal(warnings.length, 1);
  assert.match(
    warnings[0]!,
    /cannot mark this evaluation as running in .*not-a-folder\/running \(.*\): a Sleep night started meanwhile will not know to wait/,
  );
});

test('SKILLOPT_HOME moves the markers from ~/.skillopt to its own running/ folder', () => {
  assert.equal(activityDir({}), path.join(os.homedir(), '.skillopt', 'running'));
  const home = tmpDir();
  assert.equal(activityDir({ SKILLOPT_HOME: home }), path.join(home, 'running'));

  const before = process.env.SKILLOPT_HOME;
  process.env.SKILLOPT_HOME = home;
  try {
    const mark = markActivity('eval', '/runs/e', () => assert.fail('no warning'));
    const [name, ...more] = fs.readdirSync(path.join(home, 'running'));
    assert.match(name!, new RegExp(`^eval-${process.pid}-[0-9a-f]+\\.json$`));
    assert.deepEqual(more, []);
    assert.equal(
      fs.existsSync(path.join(os.homedir(), '.skillopt', 'running', name!)),
      false,
      'nothing in the home folder',
    );
    assert.deepEqual(
      runningActivities().map((a) => a.dir),
      ['/runs/e'],
    );
    mark.release();
  } finally {
    if (before === undefined) delete process.env.SKILLOPT_HOME;
    else process.env.SKILLOPT_HOME = before;
  }
});

test("the tests' own markers are kept out of the user's home", () => {
  const home = process.env.SKILLOPT_HOME;
  assert.ok(home, 'SKILLOPT_HOME is set for the test process');
  const rel = path.relative(fs.realpathSync(os.tmpdir()), fs.realpathSync(home));
  assert.ok(rel && !rel.startsWith('..') && !path.isAbsolute(rel), `${home} is a temporary folder`);
});
