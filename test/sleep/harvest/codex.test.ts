import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { codexSource, parseCodexRollout } from '../../../src/sleep/harvest/codex.ts';
import type { ReadResult } from '../../../src/sleep/harvest/source.ts';
import type { SessionDigest } from '../../../src/sleep/harvest/digest.ts';
import { fixtureHome, TRANSCRIPTS } from '../fixture-home.ts';
import { locationsOf } from './locations-of.ts';

const DIR = path.join(TRANSCRIPTS, 'codex');

function parse(rel: string): ReadResult {
  const file = path.join(DIR, rel);
  return parseCodexRollout(fs.readFileSync(file, 'utf8'), file);
}

function digest(rel: string): SessionDigest {
  const r = parse(rel);
  assert.ok('digest' in r, JSON.stringify(r));
  return r.digest;
}

test('a rollout recorded from the real Codex CLI (0.171): the AGENTS.md and environment context it injects are not prompts; each prompt and answer written twice counts once', () => {
  const d = digest('sessions/2026/11/30/rollout-2026-11-30T19-04-19-01a22dd7-fea6-7f41-853b-9232f06eec23.jsonl');
  assert.equal(d.session_id, '01a22dd7-fea6-7f41-853b-9232f06eec23');
  assert.equal(d.project, '/home/dev/acme');
  assert.equal(d.git_branch, 'main');
  // The file holds each prompt as a response item and as an item_completed event, and the
  // AGENTS.md text and <environment_context> as a user message.
  const raw = fs.readFileSync(
    path.join(DIR, 'sessions/2026/11/30/rollout-2026-11-30T19-04-19-01a22dd7-fea6-7f41-853b-9232f06eec23.jsonl'),
    'utf8',
  );
  assert.equal(raw.split('still broken: the dates are wrong').length - 1, 2);
  assert.match(raw, /# AGENTS\.md instructions for \/home\/dev\/acme/);
  assert.deepEqual(d.user_prompts, [
    'Fix the date format in report.py; my key is **** and export OPENAI_API_KEY=****',
    'still broken: the dates are wrong. FINISH-NOW',
  ]);
  assert.deepEqual(d.assistant_finals, [
    'I looked at the files: there is a README. Fixed the date format.',
    'Done. The tests pass now.',
  ]);
  assert.equal(d.n_user_turns, 2);
  assert.equal(d.n_assistant_turns, 2);
  assert.deepEqual(d.tools_used, ['exec_command']);
  assert.equal(d.started_at, '2026-11-30T19:04:19.891Z');
  assert.equal(d.ended_at, '2026-11-30T19:04:30.460Z');
});

test('a rollout of an earlier version: user_message and agent_message events beside the response items, user instructions, reasoning, tool calls, an unknown record type and a torn last line', () => {
  const d = digest('sessions/2025/09/14/rollout-2025-09-14T10-02-11-0199470e-1c2b-7d40-9a51-5d2f7a3b9c10.jsonl');
  assert.deepEqual(d.user_prompts, ['Make the report dates ISO 8601', 'perfect, thanks']);
  assert.deepEqual(d.assistant_finals, ['Switched `report.py` to `date.isoformat()`.', 'Glad it works.']);
  assert.deepEqual(d.tools_used, ['shell', 'apply_patch']);
  assert.equal(d.git_branch, 'fix/dates');
  assert.ok(!d.user_prompts.join('\n').includes('pnpm'), 'the user instructions are not a prompt');
  assert.deepEqual(d.feedback_signals, ['pos:thanks', 'pos:perfect']);
});

test('the first rollouts (bare response items, the folder only in the environment context) read too', () => {
  const d = digest('sessions/2025/04/20/rollout-2025-04-20T16-40-02-0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b.jsonl');
  assert.equal(d.project, '/home/dev/acme');
  assert.deepEqual(d.user_prompts, ['Explain what report.py does']);
  assert.deepEqual(d.tools_used, ['shell']);
});

test("a sub-agent's thread (session_meta.source names the sub-agent) is not a session of the user's", () => {
  assert.deepEqual(
    parse('sessions/2026/11/30/rollout-2026-11-30T19-20-00-01a22e00-0b1c-7d2e-8f3a-4b5c6d7e8f90.jsonl'),
    { skipped: 'sub-agent' },
  );
});

test('sessions are found under sessions/YYYY/MM/DD and in archived_sessions/; compressed rollouts are counted, not read', () => {
  const fh = fixtureHome({ agents: ['codex'] });
  fs.writeFileSync(
    path.join(
      fh.home,
      '.codex/archived_sessions/rollout-2025-01-01T00-00-00-00000000-0000-4000-8000-000000000000.jsonl.zst',
    ),
    Buffer.from([0x28, 0xb5, 0x2f, 0xfd]),
  );
  const scan = codexSource.scan(locationsOf(fh.home));
  assert.equal(scan.candidates.length, 5);
  assert.ok(scan.candidates.some((c) => c.where.includes('/archived_sessions/rollout-2025-08-02')));
  assert.deepEqual(scan.notes, ['1 compressed rollout (.jsonl.zst) not read']);
  fh.close();
});
