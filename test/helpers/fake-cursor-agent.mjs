#!/usr/bin/env node
/**
 * A stand-in for Cursor's `cursor-agent`, which is not on npm: it takes the documented command
 * line (`-p --output-format stream-json --workspace DIR …`, the prompt on stdin) and prints the
 * documented `stream-json` events (see test/fixtures/agents/cursor/README.md). It really reads
 * the skill from the workspace it is given, so a test sees what was installed there.
 * FAKE_CURSOR_SCENARIO picks the run: `rollout` (default), `not-logged-in`, `crash`, `hang`,
 * `crash-once` (crashes when the file FAKE_CURSOR_STATE does not exist yet, and creates it);
 * FAKE_CURSOR_LOG names a file to which it writes its arguments and prompt.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
if (args.includes('--version')) {
  process.stdout.write(`${process.env.FAKE_CURSOR_VERSION ?? '2026.08.11-e8db854'}\n`);
  process.exit(0);
}
const scenario = process.env.FAKE_CURSOR_SCENARIO ?? 'rollout';
const workspace = args[args.indexOf('--workspace') + 1];
const session = '2f0c9b7e-5d1a-4c83-9e6f-1b7a0d4c8e21';
const emit = (event) => process.stdout.write(`${JSON.stringify({ ...event, session_id: session })}\n`);

let prompt = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (prompt += d));
process.stdin.on('end', () => {
  if (process.env.FAKE_CURSOR_LOG)
    fs.writeFileSync(
      process.env.FAKE_CURSOR_LOG,
      JSON.stringify({ args, prompt, cwd: process.cwd(), env: Object.keys(process.env) }),
    );
  if (scenario === 'not-logged-in') {
    process.stderr.write(
      "Error: Authentication required. Please run 'cursor-agent login' first, or set CURSOR_API_KEY environment variable.\n",
    );
    process.exit(1);
  }
  emit({
    type: 'system',
    subtype: 'init',
    apiKeySource: 'login',
    cwd: workspace,
    model: 'Auto',
    permissionMode: 'default',
  });
  emit({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: prompt }] } });
  const crashOnce = scenario === 'crash-once' && !fs.existsSync(process.env.FAKE_CURSOR_STATE);
  if (crashOnce) fs.writeFileSync(process.env.FAKE_CURSOR_STATE, 'crashed');
  if (scenario === 'crash' || crashOnce) {
    process.stderr.write('Error: Connection lost: read ECONNRESET\n');
    process.exit(1);
  }
  if (scenario === 'hang') {
    // A command the agent started, then no answer: the harness must end both.
    spawn('sleep', [process.env.FAKE_CURSOR_SLEEP ?? '47'], { stdio: 'ignore', detached: true });
    setInterval(() => {}, 1000);
    return;
  }
  const skillRoot = path.join(workspace, '.cursor', 'skills');
  const skills = fs.existsSync(skillRoot) ? fs.readdirSync(skillRoot) : [];
  const rel = skills.length ? `.cursor/skills/${skills[0]}/SKILL.md` : 'task.md';
  const content = fs.readFileSync(path.join(workspace, rel), 'utf8');
  emit({
    type: 'tool_call',
    subtype: 'started',
    call_id: 'toolu_vrtx_01',
    tool_call: { readToolCall: { args: { path: rel } } },
  });
  emit({
    type: 'tool_call',
    subtype: 'completed',
    call_id: 'toolu_vrtx_01',
    tool_call: {
      readToolCall: {
        args: { path: rel },
        result: {
          success: {
            content,
            isEmpty: false,
            exceededLimit: false,
            totalLines: content.split('\n').length,
            totalChars: content.length,
          },
        },
      },
    },
  });
  const answer = `<answer>${content.split('\n').filter(Boolean).pop()}</answer>`;
  emit({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: answer }] } });
  emit({
    type: 'result',
    subtype: 'success',
    duration_ms: 1200,
    duration_api_ms: 1200,
    is_error: false,
    result: answer,
    request_id: '7c1e9a04',
    usage: { inputTokens: 900, outputTokens: 12, cacheReadTokens: 100, cacheWriteTokens: 0 },
  });
});
