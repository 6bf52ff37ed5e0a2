import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { HarvestConfigSchema } from '../../../src/sleep/config.ts';
import { resolveLocations } from '../../../src/sleep/harvest/locations.ts';
import { openCodeSource } from '../../../src/sleep/harvest/opencode.ts';
import type { SessionDigest } from '../../../src/sleep/harvest/digest.ts';
import { fixtureHome } from '../fixture-home.ts';
import { locationsOf } from './locations-of.ts';

function readAll(home: string, harvest = {}): { digests: SessionDigest[]; skipped: string[]; notes: string[] } {
  const scan = openCodeSource.scan(locationsOf(home, harvest));
  const digests: SessionDigest[] = [];
  const skipped: string[] = [];
  for (const c of scan.candidates) {
    const r = c.read();
    if ('digest' in r) digests.push(r.digest);
    else skipped.push(`${path.basename(c.where)}: ${r.skipped}`);
  }
  scan.close();
  return { digests, skipped, notes: scan.notes };
}

test("OpenCode's database: top-level sessions only; text parts that are neither synthetic nor ignored; tools; an assistant error", () => {
  const fh = fixtureHome({ agents: ['opencode'] });
  const { digests } = readAll(fh.home);
  const d = digests.find((x) => x.session_id === 'ses_53f1a2b3c4ffe8Zq1Xw2Ev3Rt4')!;
  assert.equal(d.raw_path, 'opencode://ses_53f1a2b3c4ffe8Zq1Xw2Ev3Rt4');
  assert.equal(d.project, '/home/dev/acme');
  assert.deepEqual(d.user_prompts, [
    'The report tests take 40 seconds; make them faster',
    'great, now do the same for the API tests',
  ]);
  assert.deepEqual(d.assistant_finals, [
    'The `db` fixture is function-scoped, so each test rebuilds the database.\nMade the fixture session-scoped: 12 passed in 3.1s (was 40s).',
  ]);
  assert.deepEqual(d.tools_used, ['edit', 'bash']);
  assert.deepEqual(d.feedback_signals, ['pos:great', 'neg:opencode_message_error']);
  const text = JSON.stringify(d);
  assert.ok(!text.includes('Called the Read tool'), 'a synthetic part is not the user');
  assert.ok(!text.includes('rebuilds the database for every test'), 'reasoning is not read');
  assert.ok(
    !digests.some((x) => x.session_id === 'ses_53f1a9c8d7ffeAb1Cd2Ef3Gh4I'),
    "a child session is a sub-agent's",
  );
  assert.equal(d.started_at, new Date(1764490800000).toISOString());
  assert.equal(d.ended_at, new Date(1764491100000).toISOString());
  fh.close();
});

test('the file storage of earlier versions is read for sessions the database does not hold (the worktree from the project file), and not twice for those it does', () => {
  const fh = fixtureHome({ agents: ['opencode'] });
  const { digests } = readAll(fh.home);
  assert.deepEqual(digests.map((d) => d.session_id).sort(), [
    'ses_53f1a2b3c4ffe8Zq1Xw2Ev3Rt4',
    'ses_6a7b8c9d0ffe1Gh2Ij3Kl4Mn5Op',
  ]);
  const old = digests.find((d) => d.session_id === 'ses_6a7b8c9d0ffe1Gh2Ij3Kl4Mn5Op')!;
  assert.equal(old.project, '/home/dev/other');
  assert.deepEqual(old.user_prompts, ['Add a --verbose flag to the CLI']);
  assert.deepEqual(old.tools_used, ['edit']);
  fh.close();
});

test('a message whose JSON is damaged leaves its session out whole; the database is only read', () => {
  const fh = fixtureHome({
    agents: ['opencode'],
    edit: (rel, text) =>
      rel.endsWith('opencode.db.sql')
        ? text.replace('"text":"great, now do the same for the API tests"}', '"text":"great, now do the same')
        : text,
  });
  const db = path.join(fh.home, '.local/share/opencode/opencode.db');
  const before = fs.readFileSync(`${db}-wal`).toString('base64');
  const { digests, skipped } = readAll(fh.home);
  assert.deepEqual(skipped, ['opencode.db#ses_53f1a2b3c4ffe8Zq1Xw2Ev3Rt4: unreadable']);
  assert.deepEqual(
    digests.map((d) => d.session_id),
    ['ses_6a7b8c9d0ffe1Gh2Ij3Kl4Mn5Op'],
  );
  assert.equal(fs.readFileSync(`${db}-wal`).toString('base64'), before);
  fh.close();
});

test('where the database is: the config, else OPENCODE_DB (relative to the data folder; :memory: means none), else the data folder', () => {
  const home = '/home/dev';
  const at = (harvest: Record<string, string>, env: Record<string, string>) =>
    resolveLocations(HarvestConfigSchema.parse(harvest), env, 'linux', home).opencodeDb;
  assert.equal(at({}, {}), '/home/dev/.local/share/opencode/opencode.db');
  assert.equal(at({}, { XDG_DATA_HOME: '/xdg' }), '/xdg/opencode/opencode.db');
  assert.equal(at({}, { OPENCODE_DB: 'dev.db' }), '/home/dev/.local/share/opencode/dev.db');
  assert.equal(at({}, { OPENCODE_DB: ':memory:' }), '');
  assert.equal(at({ opencode_db: '~/oc.db' }, { OPENCODE_DB: 'dev.db' }), '/home/dev/oc.db');
});
