import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { claudeSource, parseClaudeTranscript } from '../../../src/sleep/harvest/claude.ts';
import type { ReadResult } from '../../../src/sleep/harvest/source.ts';
import type { SessionDigest } from '../../../src/sleep/harvest/digest.ts';
import { fixtureHome, TRANSCRIPTS } from '../fixture-home.ts';
import { locationsOf } from './locations-of.ts';

const DIR = path.join(TRANSCRIPTS, 'claude/projects');

function digestOf(result: ReadResult): SessionDigest {
  assert.ok('digest' in result, `expected a digest, got ${JSON.stringify(result)}`);
  return result.digest;
}

function parse(rel: string): SessionDigest {
  const file = path.join(DIR, rel);
  return digestOf(parseClaudeTranscript(fs.readFileSync(file, 'utf8'), file));
}

test('a session recorded from the real Claude Code CLI: prompts, answers, tools and the Skill it used', () => {
  const d = parse('-home-dev-acme/1ebf8700-a2e4-43d9-8b5c-f3c054723a84.jsonl');
  assert.equal(d.session_id, '1ebf8700-a2e4-43d9-8b5c-f3c054723a84');
  assert.equal(d.project, '/home/dev/acme');
  assert.equal(d.git_branch, 'main');
  assert.deepEqual(d.user_prompts, [
    'Fix the date format in report.py. Here is my .env: DATABASE_URL=postgres://****@db.example.com:5432/app',
    'USE-AGENT survey the repository first',
    'EDIT-FILE write report.py with the ISO date',
    'USE-SKILL apply the date-format skill',
    'still wrong, the year is off. FINISH-NOW',
  ]);
  // The skill's body (an isMeta user record) and the tool results are not prompts.
  assert.ok(!d.user_prompts.some((p) => /Base directory for this skill|AGENTS\.md/.test(p)));
  assert.deepEqual(d.tools_used, ['Bash', 'Agent', 'Write', 'Skill']);
  assert.deepEqual(d.skills_used, ['date-format']);
  assert.equal(d.assistant_finals.at(-1), 'Done. The tests pass now.');
  assert.equal(d.n_user_turns, 5);
  assert.ok(d.feedback_signals.includes('neg:still wrong'));
  assert.equal(d.started_at, '2026-11-30T19:05:21.472Z');
  assert.equal(d.ended_at, '2026-11-30T19:05:25.605Z');
});

test("the sub-agent's own transcript (subagents/agent-*.jsonl) is not a session of its own", () => {
  const fh = fixtureHome({ agents: ['claude'] });
  const scan = claudeSource.scan(locationsOf(fh.home));
  const found = scan.candidates.map((c) => path.relative(path.join(fh.home, '.claude/projects'), c.where)).sort();
  assert.deepEqual(found, [
    '-home-dev-acme/1ebf8700-a2e4-43d9-8b5c-f3c054723a84.jsonl',
    '-home-dev-acme/5f0c2a1e-7b3d-4c9e-8a21-6d4f0e9b3c57.jsonl',
    '-home-dev-other/c3d9e1f0-2a4b-4c6d-8e0f-1a2b3c4d5e6f.jsonl',
    '-tmp-skillopt-claude-code-Qw3rTy/e7f8a9b0-1c2d-4e3f-9a4b-5c6d7e8f9a0b.jsonl',
  ]);
  // Its prompt does not reach the parent's digest either.
  assert.ok(
    !parse('-home-dev-acme/1ebf8700-a2e4-43d9-8b5c-f3c054723a84.jsonl').user_prompts.some((p) =>
      p.includes('SUBAGENT-JOB'),
    ),
  );
  fh.close();
});

test('an interactive session: one API message over several records, blocks and strings, commands, sidechains, snapshots, newer record types, a torn last line', () => {
  const d = parse('-home-dev-acme/5f0c2a1e-7b3d-4c9e-8a21-6d4f0e9b3c57.jsonl');
  // The /clear command, its caveat (isMeta), the compaction summary, the sidechain's prompt and the torn line are left out;
  // the system reminder attached to the user's turn is cut from it.
  assert.deepEqual(d.user_prompts, [
    'The date test in tests/test_report.py is flaky; make it deterministic',
    'thanks, that works now',
  ]);
  // The thinking, text and tool_use records of msg_01HKq… are one answer; the sidechain's answer is not the session's.
  assert.deepEqual(d.assistant_finals, [
    "The test reads the real clock. I'll freeze it with a fixture.",
    'Done: the test freezes the clock, so it passes on any day.',
    "You're welcome.",
  ]);
  assert.equal(d.n_assistant_turns, 3);
  assert.deepEqual(d.tools_used, ['Edit']);
  assert.deepEqual(d.files_touched, ['/home/dev/acme/tests/test_report.py']);
  assert.deepEqual(d.feedback_signals, ['pos:thanks', 'pos:works now', 'pos:that works']);
  assert.equal(d.git_branch, 'fix/flaky-date');
  assert.equal(d.started_at, '2026-11-28T09:00:00.118Z');
  assert.equal(d.ended_at, '2026-11-28T09:01:04.512Z');
});

test('a file with no conversation (only bookkeeping records, or nothing readable) gives no digest', () => {
  const bookkeeping = [
    '{"type":"summary","summary":"x","leafUuid":"a"}',
    '{"type":"file-history-snapshot","messageId":"m","snapshot":{"messageId":"m","trackedFileBackups":{},"timestamp":"2026-11-28T09:00:00Z"},"isSnapshotUpdate":false}',
    '{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-28T09:00:00Z","sessionId":"s","content":"hello"}',
    'not json',
  ].join('\n');
  assert.deepEqual(parseClaudeTranscript(bookkeeping, '/x/s.jsonl'), { skipped: 'empty' });
});
