import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { acquireRunLock } from '../../src/run/lock.ts';
import { historyRows } from '../../src/sleep/state/status.ts';
import { readState, writeState, type NightRecord } from '../../src/sleep/state/state.ts';
import { runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { homeEnvironment } from './fixture-home.ts';
import { stagedNight } from './staged-night.ts';

const night = (n: number, documents: NightRecord['documents'], note = ''): NightRecord => ({
  night: n,
  project: '/home/dev/depot',
  started_at: '2026-11-30T21:09:54.000Z',
  ended_at: '2026-11-30T21:10:00.000Z',
  dir: '',
  outcome: documents.length ? 'staged' : 'stopped',
  n_sessions: 14,
  n_tasks: n === 1 ? 14 : 0,
  documents,
  tokens: 0,
  cost_usd: 0,
  note,
});

test('history: the words left under their headings, the counts right, the documents (of any length) last', () => {
  const [head, first, second] = historyRows([
    night(1, [
      { name: 'skillopt-sleep-learned', action: 'accept_new_best', baseline: 0, candidate: 0.4, accepted: true },
      { name: 'depot-records', action: 'reject', baseline: 0.5, candidate: 0.5, accepted: false },
    ]),
    night(12, [], "the night's budget is reached"),
  ]);
  for (const [word, cell] of [
    ['project', '/home/dev/depot'],
    ['outcome', 'staged'],
    ['documents', 'skillopt-sleep-learned: accept_new_best 0.000→0.400; depot-records: reject 0.500→0.500'],
  ] as const) {
    assert.equal(first!.indexOf(cell), head!.indexOf(word), `${cell} under ${word}:\n${head}\n${first}`);
  }
  assert.equal(second!.indexOf("the night's budget is reached"), head!.indexOf('documents'));
  assert.equal(first!.indexOf('14') + 2, head!.indexOf('sessions') + 'sessions'.length, 'counts align right');
});

/** A staged night of `root` with its diff, the night's line in the state, and a Sleep config pointing at its state folder. */
function stagedProject() {
  const s = stagedNight([
    {
      name: 'depot-records',
      kind: 'skill',
      file: 'skills/depot-records/SKILL.md',
      live: '# Depot records\n',
      proposed: '# Depot records\n\n- Write every date as YYYY-MM-DD.\n- Name the site.\n',
    },
  ]);
  fs.writeFileSync(
    path.join(s.night, 'diff.patch'),
    `--- ${s.paths[0]}\n+++ ${s.paths[0]}\n@@ -1 +1,4 @@\n # Depot records\n+\n+- Write every date as YYYY-MM-DD.\n+- Name the site.\n`,
  );
  const state = readState(s.stateDir);
  state.night = 1;
  state.history.push({
    ...night(1, [
      { name: 'depot-records', action: 'accept_new_best', baseline: 0.25, candidate: 0.75, accepted: true },
    ]),
    project: s.root,
    started_at: '2026-11-30T03:17:02.000Z',
    ended_at: '2026-11-30T03:19:40.000Z',
    dir: s.night,
  });
  writeState(s.stateDir, state);
  const dir = tmpDir();
  const crontab = path.join(dir, 'crontab');
  fs.writeFileSync(
    crontab,
    `#!/bin/sh\nT='${dir}/table'\nif [ "$1" = "-l" ]; then\n  if [ -f "$T" ]; then cat "$T"; else echo "no crontab for tester" >&2; exit 1; fi\nelse cat > "$T"; fi\n`,
    { mode: 0o755 },
  );
  writeFiles(dir, { 'sleep.yaml': `state_dir: ${JSON.stringify(s.stateDir)}\n` });
  const env = homeEnvironment(s.root, {
    SKILLOPT_SLEEP_CONFIG: path.join(dir, 'sleep.yaml'),
    SKILLOPT_CRONTAB: crontab,
  });
  return { ...s, sleep: (...args: string[]) => runCli(['sleep', ...args], { env, cwd: s.root }) };
}

test('sleep status: when the last night ran and what it staged, the size of its diff, the gate, and the schedule installed', () => {
  const p = stagedProject();
  let status = p.sleep('status', '--project', p.root);
  assert.equal(status.status, 0, status.stderr);
  assert.match(status.stdout, /not scheduled: `skillopt sleep schedule`/);
  assert.match(status.stdout, /last night: 1, ran 2026-11-30 03:17 UTC, staged depot-records/);
  assert.match(
    status.stdout,
    /waiting for adoption: skill depot-records .*, gate accept_new_best: val 0\.250 → 0\.750/,
  );
  assert.match(status.stdout, /diff: \+3 -0 lines/);

  const scheduled = p.sleep('schedule', '--project', p.root, '--hour', '4', '--minute', '30');
  assert.equal(scheduled.status, 0, scheduled.stderr);
  status = p.sleep('status', '--project', p.root);
  assert.match(status.stdout, /scheduled: every night at 04:30 \(cron, since \d{4}-\d\d-\d\d \d\d:\d\d UTC\)/);
  const view = JSON.parse(p.sleep('status', '--project', p.root, '--json').stdout);
  assert.deepEqual(
    { ...view.schedule, since: undefined },
    { scheduler: 'cron', hour: 4, minute: 30, since: undefined },
  );
  assert.deepEqual(view.last_night, {
    night: 1,
    started_at: '2026-11-30T03:17:02.000Z',
    ended_at: '2026-11-30T03:19:40.000Z',
    outcome: 'staged',
    staged: ['depot-records'],
    note: '',
  });
  assert.deepEqual({ added: view.latest.diff.added, removed: view.latest.diff.removed }, { added: 3, removed: 0 });
});

test('a night that finds the lock held by another night skips, says so, and status shows the note', () => {
  const p = stagedProject();
  // This process is the other night: alive, holding the lock.
  const lock = acquireRunLock(path.join(p.stateDir, 'locks', 'night'), { what: 'a Sleep night' });
  try {
    const run = p.sleep('run', '--project', p.root, '--backend', 'sim');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /night skipped, the machine is busy: a Sleep night is in use by process \d+/);
  } finally {
    lock.release();
  }
  assert.equal(readState(p.stateDir).night, 1, 'no night ran');
  const status = p.sleep('status', '--project', p.root);
  assert.match(
    status.stdout,
    /skipped a night at \d{4}-\d\d-\d\d \d\d:\d\d UTC, the machine was busy: a Sleep night is in use by process \d+/,
  );
  assert.match(JSON.parse(p.sleep('status', '--project', p.root, '--json').stdout).skipped.reason, /in use by process/);
});
