import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DigestBuilder, LIMITS } from '../../../src/sleep/harvest/builder.ts';
import { feedbackSignals, isMetaPrompt } from '../../../src/sleep/harvest/text.ts';
import { parseSince, toMillis } from '../../../src/sleep/harvest/time.ts';

test('a secret cut in half by the length limit is still redacted: redaction comes before the clip', () => {
  const b = new DigestBuilder('claude', 's', '/x');
  // Clipped first, the text would end in " sk-proj-A": too short to look like a key, and left as it is.
  b.userText(`${'x'.repeat(LIMITS.textChars - 10)} sk-proj-AbCdEfGhIjKlMnOpQrStUvWx ${'and more '.repeat(50)}`);
  const d = b.build()!;
  assert.match(d.user_prompts[0]!, /more characters\]$/);
  assert.ok(
    !d.user_prompts[0]!.includes('sk-proj'),
    d.user_prompts[0]!.slice(LIMITS.textChars - 20, LIMITS.textChars + 40),
  );
});

test('the last five answers are kept; prompts in order; tools, skills and files once each', () => {
  const b = new DigestBuilder('codex', 's', '/x');
  for (let i = 1; i <= 7; i++) {
    b.userText(`prompt ${i}`);
    b.assistantMessage(`answer ${i}`);
    b.tool('shell');
  }
  b.tool('apply patch!');
  b.file('/a');
  b.file('/a');
  const d = b.build()!;
  assert.deepEqual(d.assistant_finals, ['answer 3', 'answer 4', 'answer 5', 'answer 6', 'answer 7']);
  assert.equal(d.user_prompts.length, 7);
  assert.deepEqual(d.tools_used, ['shell', 'apply_patch_']);
  assert.deepEqual(d.files_touched, ['/a']);
  assert.equal(d.n_assistant_turns, 7);
  assert.equal(new DigestBuilder('pi', 'e', '/x').build(), undefined, 'nothing said: no digest');
});

test('what is not a prompt: commands, tag blocks of injected context, caveats, interruptions', () => {
  for (const t of [
    '',
    '   ',
    '/clear',
    '/model opus',
    '<environment_context>\n<cwd>/x</cwd>\n</environment_context>',
    'Caveat: The messages below…',
    '[Request interrupted by user]',
    '<command-name>/review</command-name>\n<command-args>x</command-args>',
  ]) {
    assert.ok(isMetaPrompt(t), JSON.stringify(t));
  }
  for (const t of [
    'Fix the test',
    '/home/dev/acme is the repo; look at report.py and fix the header',
    'use <b> tags in the title',
  ])
    assert.ok(!isMetaPrompt(t), t);
});

test("feedback phrases count as whole words only, so 'nice' in 'service' is not praise", () => {
  assert.deepEqual(feedbackSignals('the service is down', {}), []);
  assert.deepEqual(feedbackSignals('Nope, still broken!', {}), ['neg:still broken', 'neg:nope', 'neg:broken']);
  assert.deepEqual(feedbackSignals('LGTM, thanks', {}), ['pos:thanks', 'pos:lgtm']);
  assert.deepEqual(feedbackSignals('ship it', { SKILLOPT_SLEEP_POS_FEEDBACK: 'ship it, yay' }), ['pos:ship it']);
});

test('times as the agents write them, and --since as a person writes it', () => {
  assert.equal(toMillis('2026-11-30T19:05:57.205Z'), Date.UTC(2026, 10, 30, 19, 5, 57, 205));
  assert.equal(toMillis('2026-11-30T20:05:57+01:00'), Date.UTC(2026, 10, 30, 19, 5, 57));
  assert.equal(toMillis('2026-11-20 16:02:11'), Date.UTC(2026, 10, 20, 16, 2, 11), "SQLite's datetime('now') is UTC");
  assert.equal(toMillis(1764490800), 1764490800000, 'epoch seconds');
  assert.equal(toMillis(1764490800123), 1764490800123, 'epoch milliseconds');
  assert.equal(toMillis('yesterday'), undefined);
  const now = Date.UTC(2026, 10, 30, 12);
  assert.equal(parseSince('72h', now), now - 72 * 3_600_000);
  assert.equal(parseSince('7d', now), now - 7 * 86_400_000);
  assert.equal(parseSince('2w', now), now - 14 * 86_400_000);
  assert.equal(parseSince('30m', now), now - 30 * 60_000);
  assert.equal(parseSince('2026-11-01', now), new Date(2026, 10, 1).getTime(), 'a date is local midnight');
  assert.equal(parseSince('2026-11-01T09:00Z', now), Date.UTC(2026, 10, 1, 9));
  assert.equal(parseSince('soon', now), undefined);
});
