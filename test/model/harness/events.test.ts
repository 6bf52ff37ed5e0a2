/**
 * The event-stream readers on streams the real CLIs printed (test/fixtures/agents; Cursor's in
 * its documented shape): answer, usage, cost, session, trace, and each failure classified.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ClaudeCodeEvents } from '../../../src/model/harness/claude-code-events.ts';
import { CLAUDE_CODE_CLI } from '../../../src/model/harness/claude-code.ts';
import { CODEX_CLI } from '../../../src/model/harness/codex.ts';
import { CodexEvents, unwrapShell } from '../../../src/model/harness/codex-events.ts';
import { COPILOT_CLI } from '../../../src/model/harness/copilot.ts';
import { CopilotEvents } from '../../../src/model/harness/copilot-events.ts';
import { CURSOR_CLI } from '../../../src/model/harness/cursor.ts';
import { CursorEvents } from '../../../src/model/harness/cursor-events.ts';
import type { ProcessResult } from '../../../src/model/harness/process.ts';
import type { AgentOutcome, EventReader } from '../../../src/model/harness/types.ts';
import { CallFailure } from '../../../src/model/failure.ts';
import { FatalModelError } from '../../../src/model/types.ts';
import { ROOT, tempDir } from '../../helpers/agent-cli.ts';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'agents');
const lines = (file: string) => fs.readFileSync(path.join(FIXTURES, file), 'utf8').split('\n').filter(Boolean);

function proc(over: Partial<ProcessResult> = {}): ProcessResult {
  return {
    lines: [],
    stderr: '',
    exitCode: 0,
    signal: null,
    timedOut: false,
    aborted: false,
    stopped: false,
    durationMs: 1000,
    ...over,
  };
}

/** Feeds a fixture to a reader; returns the outcome, or the error, and where the reader asked to stop. */
function read(
  reader: EventReader,
  file: string,
  p: Partial<ProcessResult> = {},
): { outcome?: AgentOutcome; error?: Error; stoppedAt?: number } {
  const all = lines(file);
  let stoppedAt: number | undefined;
  for (const [i, l] of all.entries()) {
    if (reader.line(l) === 'stop') {
      stoppedAt = i;
      break;
    }
  }
  try {
    return {
      outcome: reader.finish(
        proc({ exitCode: stoppedAt === undefined ? (p.exitCode ?? 0) : null, stopped: stoppedAt !== undefined, ...p }),
        { workspace: tempDir('skillopt-test-ws'), prompt: '', images: [] },
      ),
      ...(stoppedAt !== undefined ? { stoppedAt } : {}),
    };
  } catch (error) {
    return { error: error as Error, ...(stoppedAt !== undefined ? { stoppedAt } : {}) };
  }
}

describe('codex exec --json', () => {
  test('a rollout: the last agent message, usage of the turn, the commands and which of them failed', () => {
    const { outcome } = read(new CodexEvents(CODEX_CLI), 'codex/rollout.jsonl');
    assert.equal(outcome!.text, '<answer>42</answer>');
    assert.deepEqual(outcome!.usage, { input: 360, output: 24, cached: 60, reasoning: 0 });
    assert.equal(outcome!.trace.sessionId, '01a22da8-b83a-7290-844f-2b8edc1978b8');
    assert.deepEqual(
      outcome!.trace.steps.map((s) => [s.input, s.ok]),
      [
        ['cat .agents/skills/skillopt-target/SKILL.md', true],
        ['cat /tmp/agx-outside-ieL5nk/answers.txt', false],
      ],
    );
    assert.match(outcome!.trace.steps[1]!.output!, /No such file or directory/);
  });

  test('a refused login stops the run at the first reconnect and is fatal', () => {
    const { error, stoppedAt } = read(new CodexEvents(CODEX_CLI), 'codex/login-refused.jsonl', { exitCode: 1 });
    assert.equal(stoppedAt, 2);
    assert.ok(error instanceof FatalModelError);
    assert.match(error.message, /codex login/);
  });

  test('a rate limit it gave up on is a retryable rate_limit failure', () => {
    const { error } = read(new CodexEvents(CODEX_CLI), 'codex/rate-limited.jsonl', { exitCode: 1 });
    assert.ok(error instanceof CallFailure);
    assert.equal(error.kind, 'rate_limit');
    assert.equal(error.status, 429);
  });

  test('a run that ends without a turn event is a crash, retried', () => {
    const reader = new CodexEvents(CODEX_CLI);
    reader.line('{"type":"thread.started","thread_id":"t"}');
    assert.throws(
      () =>
        reader.finish(
          proc({ exitCode: 101, stderr: 'WARNING: proceeding\nthread main panicked at codex-rs/core/src/lib.rs:10' }),
          { workspace: '/tmp', prompt: '', images: [] },
        ),
      (err: Error) => err instanceof CallFailure && err.retryable && /panicked/.test(err.message),
    );
  });

  test('shell wrappers are taken off the commands it reports', () => {
    assert.equal(unwrapShell("/bin/bash -lc 'cat task.md'"), 'cat task.md');
    assert.equal(unwrapShell(`/bin/bash -lc 'echo '\\''hi'\\'''`), "echo 'hi'");
    assert.equal(unwrapShell('ls -la'), 'ls -la');
    // Codex 0.171 double-quotes a command that holds single quotes, and joins quoted parts.
    assert.equal(
      unwrapShell(`/bin/bash -lc "grep -c 'times' task.md; echo \\"a \\\\\\"q\\\\\\" "'$HOME"'`),
      `grep -c 'times' task.md; echo "a \\"q\\" $HOME"`,
    );
    assert.equal(unwrapShell('/bin/bash -lc "cat \\"my notes.md\\""'), 'cat "my notes.md"');
  });
});

describe('claude -p --output-format stream-json', () => {
  test('a rollout: the result text, cost, usage with cache reads added to the input, tools and refusals', () => {
    const { outcome } = read(new ClaudeCodeEvents(CLAUDE_CODE_CLI), 'claude/rollout.jsonl');
    assert.equal(outcome!.text, '<answer>42</answer>');
    assert.equal(outcome!.costUsd, 0.001278);
    assert.deepEqual(outcome!.usage, { input: 360, output: 24, cached: 60, reasoning: 0 });
    assert.equal(outcome!.trace.model, 'claude-sonnet-4-5');
    assert.deepEqual(
      outcome!.trace.steps.map((s) => [s.tool, s.ok]),
      [
        ['Bash', true],
        ['Read', false],
      ],
    );
    assert.match(outcome!.trace.steps[1]!.output!, /requested permissions to read/);
  });

  test('cache writes are counted in the input and kept apart, to be priced as writes', () => {
    const reader = new ClaudeCodeEvents(CLAUDE_CODE_CLI);
    for (const l of lines('claude/rollout.jsonl'))
      reader.line(l.replace('"cache_creation_input_tokens":0', '"cache_creation_input_tokens":500'));
    const outcome = reader.finish(proc({ exitCode: 0 }), {
      workspace: tempDir('skillopt-test-ws'),
      prompt: '',
      images: [],
    });
    assert.deepEqual(outcome.usage, { input: 860, output: 24, cached: 60, reasoning: 0, cacheWrite: 500 });
  });

  test('is_error with subtype success: a 401 is a fatal login error', () => {
    const { error } = read(new ClaudeCodeEvents(CLAUDE_CODE_CLI), 'claude/login-refused.jsonl', { exitCode: 1 });
    assert.ok(error instanceof FatalModelError);
    assert.match(error.message, /Invalid API key.*claude auth login/);
  });

  test('a 401 it is retrying stops the run at the first retry', () => {
    const { error, stoppedAt } = read(new ClaudeCodeEvents(CLAUDE_CODE_CLI), 'claude/login-refused-retrying.jsonl');
    assert.equal(stoppedAt, 1);
    assert.ok(error instanceof FatalModelError);
  });

  test('no login at all is fatal', () => {
    const { error } = read(new ClaudeCodeEvents(CLAUDE_CODE_CLI), 'claude/not-logged-in.jsonl', { exitCode: 1 });
    assert.ok(error instanceof FatalModelError);
    assert.match(error.message, /Not logged in/);
  });

  test('a 429 is a retryable rate_limit failure with the wait it names', () => {
    const { error } = read(new ClaudeCodeEvents(CLAUDE_CODE_CLI), 'claude/rate-limited.jsonl', { exitCode: 1 });
    assert.ok(error instanceof CallFailure);
    assert.equal(error.kind, 'rate_limit');
    assert.equal(error.retryAfterMs, 20_000);
  });
});

describe('copilot --output-format json', () => {
  test('a rollout: the final message, tokens from the usage report, tools and refusals', () => {
    const dir = tempDir('skillopt-test-usage');
    const usage = path.join(dir, 'usage.json');
    fs.copyFileSync(path.join(FIXTURES, 'copilot/rollout.usage.json'), usage);
    const reader = new CopilotEvents(COPILOT_CLI, usage);
    const { outcome } = read(reader, 'copilot/rollout.jsonl');
    assert.equal(outcome!.text, '<answer>42</answer>');
    assert.deepEqual(outcome!.usage, { input: 360, output: 24, cached: 60, reasoning: 0 });
    assert.equal(outcome!.trace.sessionId, '57082de7-d70f-4e86-b885-38068e200d05');
    assert.deepEqual(
      outcome!.trace.steps.map((s) => [s.tool, s.ok]),
      [
        ['bash', true],
        ['view', false],
      ],
    );
    assert.match(outcome!.trace.steps[1]!.output!, /Permission denied/);
    reader.dispose();
    assert.equal(fs.existsSync(usage), false, 'the usage report is removed');
  });

  test('an authentication error stops the run and is fatal', () => {
    const { error, stoppedAt } = read(new CopilotEvents(COPILOT_CLI, '/nonexistent'), 'copilot/login-refused.jsonl', {
      exitCode: 1,
    });
    assert.ok(stoppedAt !== undefined);
    assert.ok(error instanceof FatalModelError);
    assert.match(error.message, /HTTP 401/);
  });

  test('a rate limit it gave up on is retryable, with the wait it names', () => {
    const { error } = read(new CopilotEvents(COPILOT_CLI, '/nonexistent'), 'copilot/rate-limited.jsonl', {
      exitCode: 1,
    });
    assert.ok(error instanceof CallFailure);
    assert.equal(error.kind, 'rate_limit');
    assert.equal(error.retryAfterMs, 20_000);
  });

  test('no login at all (only stderr) is fatal and says how to log in', () => {
    const stderr = fs.readFileSync(path.join(FIXTURES, 'copilot/not-logged-in.stderr.txt'), 'utf8');
    const reader = new CopilotEvents(COPILOT_CLI, '/nonexistent');
    assert.throws(
      () => reader.finish(proc({ exitCode: 1, stderr }), { workspace: '/tmp', prompt: '', images: [] }),
      (err: Error) =>
        err instanceof FatalModelError &&
        /No authentication information found/.test(err.message) &&
        /gh auth login/.test(err.message),
    );
  });
});

describe('cursor-agent stream-json (documented shape)', () => {
  test('a rollout: the result, usage with cache reads, reads and a refused command', () => {
    const { outcome } = read(new CursorEvents(CURSOR_CLI), 'cursor/rollout.jsonl');
    assert.equal(outcome!.text, '<answer>42</answer>');
    assert.deepEqual(outcome!.usage, { input: 16996, output: 103, cached: 2048, reasoning: 0 });
    assert.equal(outcome!.trace.model, 'Auto');
    assert.deepEqual(
      outcome!.trace.steps.map((s) => [s.tool, s.input, s.ok]),
      [
        ['read', '.cursor/skills/skillopt-target/SKILL.md', true],
        ['shell', 'cat /tmp/skillopt-test-split-Hd81ka/answers.jsonl', false],
        ['read', 'task.md', true],
      ],
    );
    assert.match(outcome!.trace.steps[1]!.output!, /^rejected/);
  });

  test('a failure that ends the stream without a result is read from stderr', () => {
    const reader = new CursorEvents(CURSOR_CLI);
    for (const l of lines('cursor/rollout.jsonl').slice(0, 2)) reader.line(l);
    assert.throws(
      () =>
        reader.finish(proc({ exitCode: 1, stderr: 'Error: rate limit exceeded, try again in 30s' }), {
          workspace: '/tmp',
          prompt: '',
          images: [],
        }),
      (err: Error) => err instanceof CallFailure && err.kind === 'rate_limit' && err.retryAfterMs === 30_000,
    );
  });
});
