/**
 * The agent backends as the model stack builds them from a config, behind the scheduler, the
 * response cache and the ledger: the wrapped model is still an agent (envs hand it files), its
 * trace survives a cache hit and a resume's replay (a long one stored as one blob), the CLI's
 * "newer than tested" note reaches the run's events, and `priced` says whether a USD budget can
 * count its calls.
 */
import '../../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { RoleSchema } from '../../../src/config/schema.ts';
import type { AgentTrace } from '../../../src/model/harness/trace.ts';
import { getBackend, type BackendContext } from '../../../src/model/registry.ts';
import { buildRoleModels, ModelStack, type ModelEvent } from '../../../src/model/stack.ts';
import type { ChatModel, ChatRequest, Role } from '../../../src/model/types.ts';
import { ROOT } from '../../helpers/cli.ts';
import { configWith } from '../../helpers/model-config.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const FAKE_CURSOR = path.join(ROOT, 'test', 'helpers', 'fake-cursor-agent.mjs');
const SKILL = 'SKILL-BODY-77d1 answer with the number only';
const REQUEST: ChatRequest = {
  purpose: 'rollout',
  system: `Answer.\n\n## Skill\n\n${SKILL}`,
  skill: SKILL,
  messages: [{ role: 'user', content: 'What is 6 times 7?' }],
};

describe('agent backends in the model stack', () => {
  it('a cursor_exec target built from its config: still an agent when wrapped; its trace comes back from the provider, the cache and, on resume, the ledger; the newer-CLI note is an event', async () => {
    const dir = tmpDir();
    const target = {
      backend: 'cursor_exec',
      options: { path: FAKE_CURSOR, env: { FAKE_CURSOR_VERSION: '2027.01.05-0abc123' } },
    };
    const { config } = configWith({
      model: { target, optimizer: { backend: 'sim' } },
      cache: { mode: 'read_write', path: path.join(dir, 'responses.sqlite') },
    });
    const events: ModelEvent[] = [];
    const ledgerFile = path.join(dir, 'calls.jsonl');
    const first = await buildRoleModels(config, {
      environment: { PATH: process.env.PATH, HOME: dir },
      ledgerFile,
      onEvent: (e) => events.push(e),
    });
    assert.equal(first.target.agentic, true);
    assert.equal(first.target.id, 'cursor_exec:composer-2.5');
    const fresh = await first.target.complete(REQUEST);
    assert.equal(fresh.from, 'provider');
    assert.deepEqual(fresh.trace!.steps, [
      { tool: 'read', input: '.cursor/skills/skillopt-target/SKILL.md', ok: true },
    ]);
    assert.ok(
      events.some(
        (e) =>
          e.type === 'log' &&
          e.level === 'warn' &&
          /Cursor agent CLI is version 2027\.1\.5, newer than the newest tested with skillopt/.test(e.message),
      ),
      JSON.stringify(events),
    );
    const cached = await first.target.complete(REQUEST);
    assert.equal(cached.from, 'cache');
    assert.deepEqual(cached.trace, fresh.trace);
    first.close();
    // A resumed run replays the answer from its own ledger, trace included.
    const resumed = await buildRoleModels(
      { ...config, cache: { ...config.cache, mode: 'off' } },
      { environment: { PATH: process.env.PATH, HOME: dir }, ledgerFile },
    );
    const replayed = await resumed.target.complete(REQUEST);
    assert.equal(replayed.from, 'journal');
    assert.deepEqual(replayed.trace, fresh.trace);
    resumed.close();
  });

  it('a long trace is stored once, as one blob, and read back whole', async () => {
    const dir = tmpDir();
    const ledgerFile = path.join(dir, 'calls.jsonl');
    const trace: AgentTrace = {
      agent: 'codex',
      steps: Array.from({ length: 40 }, (_, i) => ({
        tool: 'shell',
        input: `grep -n "line ${i}" documents/a.txt`,
        ok: i % 7 !== 0,
      })),
      files: ['documents/a.txt'],
      errors: [],
      durationMs: 1200,
      exitCode: 0,
    };
    const inner: ChatModel = {
      id: 'codex_exec:gpt-5.5',
      agentic: true,
      priced: true,
      complete: async () => ({
        text: 'done',
        usage: { input: 1, output: 1, cached: 0, reasoning: 0 },
        latencyMs: 1,
        trace,
      }),
    };
    const { config } = configWith({
      model: { target: { backend: 'sim' }, optimizer: { backend: 'sim' } },
      cache: { mode: 'off' },
    });
    const stack = new ModelStack(config, { ledgerFile });
    const model = stack.wrap('target', inner, config.model.target);
    assert.equal(model.agentic, true);
    await model.complete(REQUEST);
    stack.close();
    const line = JSON.parse(fs.readFileSync(ledgerFile, 'utf8').trim());
    assert.equal(line.response.trace, null);
    assert.match(line.blobs['/response/trace'], /^json:[0-9a-f]{64}$/);
    const again = new ModelStack(config, { ledgerFile });
    assert.deepEqual((await again.wrap('target', inner, config.model.target).complete(REQUEST)).trace, trace);
    again.close();
  });

  it('priced: Claude Code reports its cost; Codex and Copilot by the price of a known model; a model left to the CLI, or unknown, is not', () => {
    const ctx = (role: Role): BackendContext => ({
      role,
      environment: { PATH: '/usr/bin' },
      reasoningEffort: '',
      seed: 1,
    });
    const priced = (backend: string, over: Record<string, unknown>, role: Role = 'target') =>
      (getBackend(backend)!.create(RoleSchema.parse({ backend, ...over }), ctx(role)) as ChatModel).priced;
    assert.equal(priced('claude_code_exec', { model: '' }), true);
    assert.equal(priced('claude_chat', { model: 'some-future-claude' }, 'optimizer'), true);
    assert.equal(priced('codex_exec', { model: 'gpt-5.5' }), true);
    assert.equal(priced('codex', { model: 'gpt-5.5' }, 'optimizer'), true);
    assert.equal(priced('codex_exec', { model: 'my-finetune' }), false);
    assert.equal(priced('copilot_exec', { model: '' }), false);
    assert.equal(priced('copilot_chat', { model: 'gpt-5.4' }, 'judge'), true);
    assert.equal(priced('cursor_exec', { model: 'composer-2.5' }), false);
    assert.equal(priced('cursor_exec', { model: 'composer-2.5', price: { input: 1, output: 2 } }), true);
  });
});
