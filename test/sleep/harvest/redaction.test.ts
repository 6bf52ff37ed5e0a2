/**
 * Every kind of secret planted in a prompt and an answer of a session in each agent's format
 * (file logs, edit logs, event logs, SQLite stores, JSON file stores, plain text): none survives
 * in anything `skillopt sleep harvest` writes or prints.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { readDigests } from '../../../src/sleep/harvest/digests-file.ts';
import { runCli } from '../../helpers/cli.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { fixtureHome, homeEnvironment } from '../fixture-home.ts';
import { PLANTED } from '../planted.ts';

const SECRETS = PLANTED.map((p) => p.text).join('\n');

type Escape = 'json' | 'sql' | 'sql-json' | 'raw';
const escapeAs: Record<Escape, (s: string) => string> = {
  json: (s) => JSON.stringify(s).slice(1, -1),
  sql: (s) => s.replace(/'/g, "''"),
  'sql-json': (s) => JSON.stringify(s).slice(1, -1).replace(/'/g, "''"),
  raw: (s) => s,
};

/** One session of each format: the fixture file, the session, a prompt and an answer of it. */
const PLANTS: { file: string; session: string; prompt: string; answer: string; escape: Escape }[] = [
  {
    file: 'claude/projects/-home-dev-acme/5f0c2a1e-7b3d-4c9e-8a21-6d4f0e9b3c57.jsonl',
    session: '5f0c2a1e-7b3d-4c9e-8a21-6d4f0e9b3c57',
    prompt: 'The date test in tests/test_report.py is flaky; make it deterministic',
    answer: "The test reads the real clock. I'll freeze it with a fixture.",
    escape: 'json',
  },
  {
    file: 'codex/sessions/2025/09/14/rollout-2025-09-14T10-02-11-0199470e-1c2b-7d40-9a51-5d2f7a3b9c10.jsonl',
    session: '0199470e-1c2b-7d40-9a51-5d2f7a3b9c10',
    prompt: 'Make the report dates ISO 8601',
    answer: 'Glad it works.',
    escape: 'json',
  },
  {
    file: 'codex/sessions/2026/11/30/rollout-2026-11-30T19-04-19-01a22dd7-fea6-7f41-853b-9232f06eec23.jsonl',
    session: '01a22dd7-fea6-7f41-853b-9232f06eec23',
    prompt: 'still broken: the dates are wrong. FINISH-NOW',
    answer: 'Done. The tests pass now.',
    escape: 'json',
  },
  {
    file: 'vscode/workspaceStorage/6f1c2e9a0b7d4e3f8a5c1d2e3f4a5b6c/chatSessions/0f3b1c6e-5a7d-4e9f-b2c4-6d8e0a1b3c5d.jsonl',
    session: '0f3b1c6e-5a7d-4e9f-b2c4-6d8e0a1b3c5d',
    prompt: 'Why does test_report fail on Mondays?',
    answer: 'Fixed: the test now freezes the date to a Wednesday.',
    escape: 'json',
  },
  {
    file: 'copilot/session-state/8f710fbb-12d0-40e0-a53b-3fc42de9acd5/events.jsonl',
    session: '8f710fbb-12d0-40e0-a53b-3fc42de9acd5',
    prompt: 'that is wrong, use ISO dates. FINISH-NOW',
    answer: 'Read the README and listed files.',
    escape: 'json',
  },
  {
    file: 'copilot/session-store.db.sql',
    session: '3c5e7a9b-1d2f-4a6b-8c0d-2e4f6a8b0c1d',
    prompt: 'Add a dark mode toggle to the settings page',
    answer: 'The theme is now read from localStorage on start.',
    escape: 'sql',
  },
  {
    file: 'cursor/projects/home-dev-acme/agent-transcripts/7c1d9e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f/7c1d9e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f.jsonl',
    session: '7c1d9e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f',
    prompt: 'Use ISO dates in the weekly report',
    answer: 'Dates in the weekly report are now ISO 8601.',
    escape: 'json',
  },
  {
    file: 'cursor/projects/home-dev-acme/agent-transcripts/4d5e6f70-8192-4a3b-8c4d-5e6f70819203.txt',
    session: '4d5e6f70-8192-4a3b-8c4d-5e6f70819203',
    prompt: 'Rename fmt_date to format_date',
    answer: 'Renamed `fmt_date` to `format_date` in report.py and tests.',
    escape: 'raw',
  },
  {
    file: 'opencode/opencode.db.sql',
    session: 'ses_53f1a2b3c4ffe8Zq1Xw2Ev3Rt4',
    prompt: 'The report tests take 40 seconds; make them faster',
    answer: 'Made the fixture session-scoped: 12 passed in 3.1s (was 40s).',
    escape: 'sql-json',
  },
  {
    file: 'opencode/storage/part/msg_9c8b7a6d5001Zz1Yy2Xx3Ww4Vv/prt_9c8b7a6d5101Zz1Yy2Xx3Ww4Vv.json',
    session: 'ses_6a7b8c9d0ffe1Gh2Ij3Kl4Mn5Op',
    prompt: 'Add a --verbose flag to the CLI',
    answer: '',
    escape: 'json',
  },
  {
    file: 'opencode/storage/part/msg_9c8b7a6d5002Zz1Yy2Xx3Ww4Vv/prt_9c8b7a6d5202Zz1Yy2Xx3Ww4Vv.json',
    session: 'ses_6a7b8c9d0ffe1Gh2Ij3Kl4Mn5Op',
    prompt: '',
    answer: 'Added --verbose to cli.py.',
    escape: 'json',
  },
  {
    file: 'pi/sessions/--home-dev-acme--/2026-11-27T15-30-02-410Z_3d8c1a2b-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl',
    session: '3d8c1a2b-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
    prompt: 'Add type hints to report.py',
    answer: 'Added hints with `Optional`.',
    escape: 'json',
  },
  {
    file: 'devin/transcripts/devin-5e2a9c1f-7b3d-4e8a-9f0c-1d2e3f4a5b6c.json',
    session: 'devin-5e2a9c1f-7b3d-4e8a-9f0c-1d2e3f4a5b6c',
    prompt: 'lgtm, thanks',
    answer: 'Switched to orElseThrow(NotFoundException::new); mvn test passes (142 tests).',
    escape: 'json',
  },
];

function plant(rel: string, text: string): string {
  let out = text;
  for (const p of PLANTS.filter((x) => x.file === rel)) {
    for (const original of [p.prompt, p.answer].filter(Boolean)) {
      assert.ok(out.includes(escapeAs[p.escape](original)), `${rel} holds "${original}"`);
      out = out.split(escapeAs[p.escape](original)).join(escapeAs[p.escape](`${original}\n${SECRETS}`));
    }
  }
  return out;
}

test('secrets planted in every agent format: none survives in the harvest file or on the console', () => {
  const fh = fixtureHome({ edit: plant });
  const out = path.join(tmpDir('skillopt-sleep-out-'), 'harvest.jsonl');
  const res = runCli(
    ['sleep', 'harvest', '--project', 'all', '--since', '2000-01-01', '--max-sessions', '0', '--out', out, '--json'],
    { env: homeEnvironment(fh.home) },
  );
  fh.close();
  assert.equal(res.status, 0, res.stderr);
  const written = fs.readFileSync(out, 'utf8');
  for (const p of PLANTED) {
    assert.ok(!written.includes(p.secret), `${p.kind} survives in the harvest file`);
    assert.ok(!res.stdout.includes(p.secret) && !res.stderr.includes(p.secret), `${p.kind} survives on the console`);
  }
  // Each planted session was harvested, with its prompt (and answer) kept and the secrets replaced.
  const digests = new Map(readDigests(out).map((d) => [d.session_id, d]));
  for (const p of PLANTS) {
    const d = digests.get(p.session);
    assert.ok(d, `${p.file}: the session was harvested`);
    if (p.prompt)
      assert.ok(
        d.user_prompts.some((u) => u.startsWith(p.prompt) && u.includes('my key is ****')),
        `${p.file}: ${JSON.stringify(d.user_prompts)}`,
      );
    if (p.answer)
      assert.ok(
        d.assistant_finals.some((a) => a.includes(p.answer.split('\n')[0]!) && a.includes('DB_PASSWORD=****')),
        `${p.file}: ${JSON.stringify(d.assistant_finals)}`,
      );
  }
});
