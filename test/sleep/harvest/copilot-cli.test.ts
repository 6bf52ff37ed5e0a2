import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { copilotCliSource, parseCopilotEvents } from '../../../src/sleep/harvest/copilot-cli.ts';
import type { SessionDigest } from '../../../src/sleep/harvest/digest.ts';
import { fixtureHome, TRANSCRIPTS } from '../fixture-home.ts';
import { locationsOf } from './locations-of.ts';

const RECORDED = '8f710fbb-12d0-40e0-a53b-3fc42de9acd5';

function readAll(home: string): Map<string, SessionDigest> {
  const scan = copilotCliSource.scan(locationsOf(home));
  const out = new Map<string, SessionDigest>();
  for (const c of scan.candidates) {
    const r = c.read();
    assert.ok('digest' in r, JSON.stringify(r));
    out.set(r.digest.session_id, r.digest);
  }
  scan.close();
  return out;
}

test('an event log recorded from the real Copilot CLI (1.0.102, resumed twice): what the user typed, the answers, the tools requested', () => {
  const file = path.join(TRANSCRIPTS, 'copilot/session-state', RECORDED, 'events.jsonl');
  const r = parseCopilotEvents(fs.readFileSync(file, 'utf8'), file);
  assert.ok('digest' in r);
  const d = r.digest;
  assert.equal(d.session_id, RECORDED);
  assert.equal(d.project, '/home/dev/acme');
  assert.equal(d.git_branch, 'main');
  // user.message.content, not transformedContent (which adds <current_datetime>).
  assert.deepEqual(d.user_prompts, [
    'Fix the date format; token **** is in ~/.netrc',
    'that is wrong, use ISO dates. FINISH-NOW',
    'CREATE-FILE write the date rules into notes.md, thanks',
  ]);
  assert.deepEqual(d.assistant_finals, [
    'Read the README and listed files.',
    'Done. The tests pass now.',
    'Created notes.md.',
  ]);
  assert.deepEqual(d.tools_used, ['view', 'bash', 'create']);
  assert.equal(d.started_at, '2026-11-30T19:05:57.205Z');
});

test('the session store (real schema): a session in both is read from its event log with the files the store lists; one whose log is gone is read from the store', () => {
  const fh = fixtureHome({ agents: ['copilot'] });
  const all = readAll(fh.home);
  assert.deepEqual([...all.keys()].sort(), ['3c5e7a9b-1d2f-4a6b-8c0d-2e4f6a8b0c1d', RECORDED]);
  assert.deepEqual(all.get(RECORDED)!.files_touched, ['/home/dev/acme/README.md']);
  assert.equal(all.get(RECORDED)!.raw_path, path.join(fh.home, '.copilot/session-state', RECORDED, 'events.jsonl'));
  const old = all.get('3c5e7a9b-1d2f-4a6b-8c0d-2e4f6a8b0c1d')!;
  assert.equal(old.raw_path, `${path.join(fh.home, '.copilot/session-store.db')}#3c5e7a9b-1d2f-4a6b-8c0d-2e4f6a8b0c1d`);
  assert.equal(old.project, '/home/dev/acme/web');
  assert.equal(old.git_branch, 'feature/ui');
  // The /model command is not a prompt; SQLite's "YYYY-MM-DD HH:MM:SS" times are UTC.
  assert.deepEqual(old.user_prompts, [
    'Add a dark mode toggle to the settings page',
    'it does not work after a reload',
  ]);
  assert.equal(old.started_at, '2026-11-20T16:02:11.000Z');
  assert.equal(old.ended_at, '2026-11-20T16:09:54.000Z');
  assert.deepEqual(old.files_touched, ['/home/dev/acme/web/settings.tsx']);
  assert.deepEqual(old.tools_used, ['edit']);
  assert.deepEqual(old.feedback_signals, ['neg:does not work']);
  fh.close();
});

test('rows committed only to the write-ahead log of a running Copilot are read, and the store is not touched', () => {
  const fh = fixtureHome({ agents: ['copilot'] });
  const store = path.join(fh.home, '.copilot/session-store.db');
  // The fixture's writer is still open: everything is in session-store.db-wal, nothing checkpointed yet.
  assert.ok(fs.statSync(`${store}-wal`).size > 0);
  const before = ['', '-wal', '-shm'].map((s) => [
    fs.readFileSync(store + s).toString('base64'),
    fs.statSync(store + s).mtimeMs,
  ]);
  assert.equal(readAll(fh.home).size, 2);
  const after = ['', '-wal', '-shm'].map((s) => [
    fs.readFileSync(store + s).toString('base64'),
    fs.statSync(store + s).mtimeMs,
  ]);
  assert.deepEqual(after, before);
  fh.close();
});

test('a store that is not a database is reported, and the event logs are still read', () => {
  const fh = fixtureHome({ agents: ['copilot'] });
  fh.close();
  const store = path.join(fh.home, '.copilot/session-store.db');
  fs.rmSync(`${store}-wal`, { force: true });
  fs.rmSync(`${store}-shm`, { force: true });
  fs.writeFileSync(store, 'not a database');
  const scan = copilotCliSource.scan(locationsOf(fh.home));
  assert.equal(scan.candidates.length, 1);
  assert.equal(scan.notes.length, 1);
  assert.match(scan.notes[0]!, /session store .*session-store\.db could not be read/);
  scan.close();
});
