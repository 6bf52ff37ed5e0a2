import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { HarvestConfigSchema } from '../../../src/sleep/config.ts';
import { resolveLocations } from '../../../src/sleep/harvest/locations.ts';
import { parsePiSession } from '../../../src/sleep/harvest/pi.ts';
import { TRANSCRIPTS } from '../fixture-home.ts';
import { locationsOf } from './locations-of.ts';

const DIR = path.join(TRANSCRIPTS, 'pi/sessions/--home-dev-acme--');
const parse = (name: string) => parsePiSession(fs.readFileSync(path.join(DIR, name), 'utf8'), path.join(DIR, name));

test("a version 3 session tree: only the branch that ends at the last entry (the user's other attempt is left out); tools from toolCall blocks and tool results; thinking not read", () => {
  const r = parse('2026-11-27T15-30-02-410Z_3d8c1a2b-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl');
  assert.ok('digest' in r, JSON.stringify(r));
  const d = r.digest;
  assert.equal(d.session_id, '3d8c1a2b-4e5f-4a6b-8c7d-9e0f1a2b3c4d');
  assert.equal(d.project, '/home/dev/acme');
  assert.deepEqual(d.user_prompts, ['Add type hints to report.py', 'Keep Optional, but also annotate the tests']);
  assert.deepEqual(d.assistant_finals, [
    'Added hints with `Optional`.',
    'Annotated the tests too, thanks for the pointer.',
  ]);
  assert.deepEqual(d.tools_used, ['read', 'edit']);
  assert.ok(!JSON.stringify(d).includes('X | None') && !JSON.stringify(d).includes('Start with fmt_date'));
  assert.equal(d.started_at, '2026-11-27T15:30:02.410Z');
  assert.equal(d.ended_at, '2026-11-27T15:32:30.000Z');
});

test('a version 1 session (no version field) is read in order', () => {
  const r = parse('2025-12-01T10-00-00-000Z_1a2b3c4d-0000-4000-8000-5e6f7a8b9c0d.jsonl');
  assert.ok('digest' in r);
  assert.deepEqual(r.digest.user_prompts, ['What does fmt_date return?']);
});

test('a broken tree, an unknown version, a misplaced header or a bad line before the last leaves the session out; a torn last line does not', () => {
  assert.deepEqual(parse('2026-11-25T08-00-00-000Z_9f8e7d6c-0000-4000-8000-5b4a39281706.jsonl'), {
    skipped: 'unreadable',
  });
  const good = fs.readFileSync(
    path.join(DIR, '2026-11-27T15-30-02-410Z_3d8c1a2b-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl'),
    'utf8',
  );
  const lines = good.trimEnd().split('\n');
  assert.deepEqual(parsePiSession(good.replace('"version":3', '"version":4'), 'x.jsonl'), { skipped: 'unreadable' });
  assert.deepEqual(parsePiSession(good.replace('"version":3', '"version":"3"'), 'x.jsonl'), { skipped: 'unreadable' });
  assert.deepEqual(parsePiSession([lines[3], ...lines].join('\n'), 'x.jsonl'), { skipped: 'unreadable' });
  assert.deepEqual(parsePiSession([...lines.slice(0, 4), '{"type":"mess', ...lines.slice(4)].join('\n'), 'x.jsonl'), {
    skipped: 'unreadable',
  });
  assert.deepEqual(
    parsePiSession([...lines, lines[4]].join('\n'), 'x.jsonl'),
    { skipped: 'unreadable' },
    'a duplicate id',
  );
  const torn = parsePiSession(`${good}{"type":"message","id":"a000000f","parentId":"a000000e","timest`, 'x.jsonl');
  assert.ok('digest' in torn);
});

test("pi's sessions folder: PI_CODING_AGENT_DIR, or the config's pi_home", () => {
  assert.equal(locationsOf('/home/dev').piSessions, '/home/dev/.pi/agent/sessions');
  assert.equal(locationsOf('/home/dev', { pi_home: '/opt/pi' }).piSessions, '/opt/pi/agent/sessions');
  assert.equal(
    resolveLocations(HarvestConfigSchema.parse({}), { PI_CODING_AGENT_DIR: '/srv/pi-agent' }, 'linux', '/home/dev')
      .piSessions,
    '/srv/pi-agent/sessions',
  );
});
