import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { cursorSource } from '../../../src/sleep/harvest/cursor.ts';
import { inScope, scopeOf } from '../../../src/sleep/harvest/scope.ts';
import type { SessionDigest } from '../../../src/sleep/harvest/digest.ts';
import { fixtureHome } from '../fixture-home.ts';
import { locationsOf } from './locations-of.ts';

function scanAll(home: string): { digest: SessionDigest; slug?: string }[] {
  const scan = cursorSource.scan(locationsOf(home));
  return scan.candidates.map((c) => {
    const r = c.read();
    assert.ok('digest' in r, JSON.stringify(r));
    return { digest: r.digest, slug: c.workspaceSlug };
  });
}

test("Cursor's agent transcripts: the user's query without the context Cursor attaches, answers, tools, an error ending a turn, a torn last line", () => {
  const fh = fixtureHome({ agents: ['cursor'] });
  const d = scanAll(fh.home).find((s) => s.digest.session_id === '7c1d9e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f')!.digest;
  assert.equal(d.project, '/home/dev/acme');
  assert.deepEqual(d.user_prompts, [
    'Use ISO dates in the weekly report',
    "that's wrong, the header still shows 11/26/2026",
  ]);
  assert.deepEqual(d.assistant_finals, [
    "I'll switch `fmt_date` to ISO 8601.",
    'Dates in the weekly report are now ISO 8601.',
    'Fixing the header as well.',
  ]);
  assert.deepEqual(d.tools_used, ['Read', 'StrReplace', 'Shell']);
  assert.ok(d.feedback_signals.includes('neg:cursor_turn_error'));
  assert.ok(!d.user_prompts.join('').includes('OS Version'));
  // No times in the file: the session ended when the file was last written.
  assert.equal(d.started_at, d.ended_at);
  assert.ok(d.ended_at);
  fh.close();
});

test('a workspace without .workspace-trusted is matched to its project by the folder name Cursor gives it; plain-text transcripts read', () => {
  const fh = fixtureHome({ agents: ['cursor'] });
  const all = scanAll(fh.home);
  const other = all.find((s) => s.digest.session_id === '2b3c4d5e-6f70-4a81-9b2c-3d4e5f607182')!;
  assert.equal(other.digest.project, '');
  assert.equal(other.slug, 'home-dev-other');
  assert.ok(inScope(scopeOf(['/home/dev/other']), other.digest.project, other.slug));
  assert.ok(!inScope(scopeOf(['/home/dev/acme']), other.digest.project, other.slug));
  const text = all.find((s) => s.digest.session_id === '4d5e6f70-8192-4a3b-8c4d-5e6f70819203')!.digest;
  assert.deepEqual(text.user_prompts, ['Rename fmt_date to format_date']);
  assert.equal(text.assistant_finals.at(-1), 'Renamed `fmt_date` to `format_date` in report.py and tests.');
  assert.deepEqual(text.tools_used, ['Grep']);
  assert.equal(path.basename(text.raw_path), '4d5e6f70-8192-4a3b-8c4d-5e6f70819203.txt');
  fh.close();
});
