/**
 * The agent backends as the model stack will build them from a role's configuration: the exec
 * backends are agents as the target and chat models in the other roles; the `*_chat` backends and
 * `codex` are chat models everywhere; options are checked with the key named.
 */
import '../../../src/builtins.ts';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RoleSchema } from '../../../src/config/schema.ts';
import { AGENT_BACKENDS } from '../../../src/model/harness/backends.ts';
import type { BackendContext } from '../../../src/model/registry.ts';
import { FatalModelError, type Role } from '../../../src/model/types.ts';

const spec = (name: string) => AGENT_BACKENDS.find((b) => b.name === name)!;
const ctx = (role: Role): BackendContext => ({
  role,
  environment: { PATH: '/usr/bin' },
  reasoningEffort: 'medium',
  seed: 1,
});
const role = (over: Record<string, unknown> = {}) => RoleSchema.parse({ backend: 'x', model: 'gpt-5.5', ...over });

describe('agent backends', () => {
  test('exec backends are agents as the target and chat models as the optimizer or judge', async () => {
    for (const name of ['codex_exec', 'claude_code_exec', 'copilot_exec']) {
      const target = await spec(name).create(role(), ctx('target'));
      assert.equal(target.agentic, true, name);
      assert.equal(target.id, `${name}:gpt-5.5`);
      const optimizer = await spec(name).create(role(), ctx('optimizer'));
      assert.ok(!optimizer.agentic, name);
    }
    for (const name of ['claude_chat', 'copilot_chat', 'codex'])
      assert.ok(!(await spec(name).create(role(), ctx('target'))).agentic, name);
  });

  test('cursor_exec runs only as the target', () => {
    assert.throws(
      () => spec('cursor_exec').create(role(), ctx('optimizer')),
      (err: Error) => err instanceof FatalModelError && /cursor_exec runs only as the target/.test(err.message),
    );
    assert.equal(
      (spec('cursor_exec').create(role({ model: '' }), ctx('target')) as { id: string }).id,
      'cursor_exec:default',
    );
  });

  test('options are checked, naming the key', () => {
    assert.throws(
      () => spec('codex_exec').create(role({ options: { skill_install: 'folder' } }), ctx('target')),
      (err: Error) => err instanceof FatalModelError && /model\.target\.options\.skill_install/.test(err.message),
    );
    assert.throws(
      () => spec('claude_code_exec').create(role({ options: { skill_name: 'My Skill' } }), ctx('target')),
      /model\.target\.options\.skill_name: the skill name 'My Skill' holds other characters than lower-case letters/,
    );
    assert.throws(
      () => spec('copilot_exec').create(role({ options: { sandbox: true } }), ctx('target')),
      /model\.target\.options.*Unrecognized key: "sandbox"/,
    );
  });
});
