/**
 * An agent target's answer depends on the skill it finds installed and on the files in its
 * workspace, so both are part of a request's identity (cache and journal keys).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestKey } from '../../../src/model/request-key.ts';
import type { ChatRequest } from '../../../src/model/types.ts';

const base: ChatRequest = { purpose: 'rollout', system: 'Answer.', messages: [{ role: 'user', content: 'Q' }] };

test('requests that differ in the skill or the workspace files are different calls', () => {
  const keys = new Set([
    requestKey('codex_exec:gpt-5.5', base),
    requestKey('codex_exec:gpt-5.5', { ...base, skill: 'Rule A' }),
    requestKey('codex_exec:gpt-5.5', { ...base, skill: 'Rule B' }),
    requestKey('codex_exec:gpt-5.5', { ...base, workspaceFiles: [{ path: 'doc.txt', content: 'one' }] }),
    requestKey('codex_exec:gpt-5.5', { ...base, workspaceFiles: [{ path: 'doc.txt', content: 'two' }] }),
  ]);
  assert.equal(keys.size, 5);
});
