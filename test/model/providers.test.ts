import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { RoleSchema, type RoleConfig } from '../../src/config/schema.ts';
import { getBackend, type BackendContext } from '../../src/model/registry.ts';
import { FatalModelError, type ChatModel, type ChatRequest, type Role } from '../../src/model/types.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { tmpDir } from '../helpers/tmp.ts';

function model(
  role: Partial<RoleConfig> & { backend: string },
  environment: Record<string, string> = {},
  r: Role = 'target',
  effort = '',
  notices: string[] = [],
): ChatModel {
  const rc = RoleSchema.parse(role);
  if (!rc.model) rc.model = getBackend(rc.backend)!.defaultModel;
  const ctx: BackendContext = {
    role: r,
    environment,
    reasoningEffort: effort,
    seed: 1,
    notice: (m) => notices.push(m),
  };
  return getBackend(rc.backend)!.create(rc, ctx) as ChatModel;
}

const ask = (text: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  purpose: 'rollout',
  system: 'You are terse.',
  messages: [{ role: 'user', content: text }],
  ...extra,
});

// A 1x1 PNG.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

describe('providers speak their wire formats', () => {
  let fake: FakeProvider;
  before(async () => {
    fake = await startFakeProvider({
      respond: (r) => ({
        text: r.body.response_format || r.body.text?.format ? '{"answer": "42"}' : 'ok',
        usage: { input: 1000, output: 200, cached: 400, reasoning: 50 },
      }),
    });
  });
  after(() => fake.close());

  it('openai_chat: Chat Completions with system message, max_completion_tokens, JSON schema, images; no reasoning effort for gpt-4o; usage and cost read back', async () => {
    const dir = tmpDir();
    const png = path.join(dir, 'page.png');
    fs.writeFileSync(png, PNG);
    const notices: string[] = [];
    const m = model(
      {
        backend: 'openai_chat',
        model: 'gpt-4o',
        base_url: `${fake.url}/v1`,
        max_output_tokens: 300,
        options: { provider: 'openai' },
      },
      { OPENAI_API_KEY: 'sk-test' },
      'optimizer',
      'high',
      notices,
    );
    const res = await m.complete(
      ask('', {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is on the page?' },
              { type: 'image', image: png },
              { type: 'image', image: `data:image/png;base64,${PNG.toString('base64')}` },
            ],
          },
        ],
        schema: z.object({ answer: z.string() }),
        schemaName: 'answer',
      }),
    );
    const r = fake.requests.at(-1)!;
    assert.equal(r.path, '/v1/chat/completions');
    assert.equal(r.headers.authorization, 'Bearer sk-test');
    assert.equal(r.body.model, 'gpt-4o');
    assert.deepEqual(r.body.messages[0], { role: 'system', content: 'You are terse.' });
    const parts = r.body.messages[1].content;
    assert.equal(parts[0].text, 'What is on the page?');
    assert.equal(parts[1].image_url.url, `data:image/png;base64,${PNG.toString('base64')}`);
    assert.equal(parts[2].image_url.url, `data:image/png;base64,${PNG.toString('base64')}`);
    assert.equal(r.body.max_completion_tokens, 300);
    assert.equal(r.body.max_tokens, undefined);
    // gpt-4o answers 400 to a reasoning effort (the fake server too): it is left out, and said once.
    assert.equal('reasoning_effort' in r.body, false);
    await m.complete(ask('again'));
    assert.equal(notices.length, 1);
    assert.match(
      notices[0]!,
      /model\.optimizer \(gpt-4o\) does not take a reasoning effort \('high'\).*model\.optimizer\.capabilities\.reasoning_effort: true/,
    );
    assert.equal(r.body.response_format.type, 'json_schema');
    assert.equal(r.body.response_format.json_schema.name, 'answer');
    assert.deepEqual(r.body.response_format.json_schema.schema.required, ['answer']);
    assert.deepEqual(res.parsed, { answer: '42' });
    assert.deepEqual(res.usage, { input: 1000, output: 200, cached: 400, reasoning: 50 });
    // gpt-4o: $2.50 in, $1.25 cached, $10 out per 1M tokens.
    assert.ok(Math.abs(res.costUsd! - (600 * 2.5 + 400 * 1.25 + 200 * 10) / 1e6) < 1e-12);
  });

  it('openai_chat: a reasoning model (gpt-5) gets the reasoning effort; gpt-4.1 and gpt-5-chat do not', async () => {
    const notices: string[] = [];
    await model(
      { backend: 'openai_chat', model: 'gpt-5', base_url: `${fake.url}/v1`, options: { provider: 'openai' } },
      { OPENAI_API_KEY: 'k' },
      'target',
      'medium',
      notices,
    ).complete(ask('hi'));
    assert.equal(fake.requests.at(-1)!.body.reasoning_effort, 'medium');
    await model(
      {
        backend: 'openai_chat',
        model: 'o4-mini-2025-04-16',
        base_url: `${fake.url}/v1`,
        options: { provider: 'openai' },
      },
      { OPENAI_API_KEY: 'k' },
      'target',
      'low',
      notices,
    ).complete(ask('hi'));
    assert.equal(fake.requests.at(-1)!.body.reasoning_effort, 'low');
    for (const name of ['gpt-4.1-mini', 'gpt-4o-mini', 'gpt-5-chat-latest']) {
      await model(
        { backend: 'openai_chat', model: name, base_url: `${fake.url}/v1`, options: { provider: 'openai' } },
        { OPENAI_API_KEY: 'k' },
        'target',
        'medium',
        notices,
      ).complete(ask('hi'));
      assert.equal('reasoning_effort' in fake.requests.at(-1)!.body, false, name);
    }
    assert.equal(notices.length, 3);
    // A per-call effort (the optimizer's rewrite effort) is dropped the same way.
    await model(
      { backend: 'openai_chat', model: 'gpt-4o', base_url: `${fake.url}/v1`, options: { provider: 'openai' } },
      { OPENAI_API_KEY: 'k' },
      'target',
      '',
    ).complete(ask('hi', { reasoningEffort: 'high' }));
    assert.equal('reasoning_effort' in fake.requests.at(-1)!.body, false);
  });

  it('openai_chat: capabilities override the table; the fake server refuses an effort for gpt-4o as the real API does', async () => {
    const forced = model(
      {
        backend: 'openai_chat',
        model: 'gpt-4o',
        base_url: `${fake.url}/v1`,
        capabilities: { reasoning_effort: true },
        options: { provider: 'openai' },
      },
      { OPENAI_API_KEY: 'k' },
      'target',
      'medium',
    );
    await assert.rejects(
      forced.complete(ask('hi')),
      (e: Error & { kind?: string }) =>
        e.kind === 'bad_request' && /Unsupported parameter: 'reasoning_effort'/.test(e.message),
    );
    assert.equal(fake.requests.at(-1)!.body.reasoning_effort, 'medium');
    // An Azure deployment name says nothing about the model: the effort goes out unless the role says otherwise.
    await model(
      { backend: 'openai_chat', model: 'prod-deployment', base_url: `${fake.url}/v1`, options: { provider: 'openai' } },
      { OPENAI_API_KEY: 'k' },
      'target',
      'low',
    ).complete(ask('hi'));
    assert.equal(fake.requests.at(-1)!.body.reasoning_effort, 'low');
    await model(
      {
        backend: 'openai_chat',
        model: 'prod-deployment',
        base_url: `${fake.url}/v1`,
        capabilities: { reasoning_effort: false },
        options: { provider: 'openai' },
      },
      { OPENAI_API_KEY: 'k' },
      'target',
      'low',
    ).complete(ask('hi'));
    assert.equal('reasoning_effort' in fake.requests.at(-1)!.body, false);
  });

  it('openai_chat: the Responses API leaves reasoning.effort out for a model without reasoning', async () => {
    await model(
      {
        backend: 'openai_chat',
        model: 'gpt-4.1',
        base_url: `${fake.url}/v1`,
        options: { provider: 'openai', api: 'responses' },
      },
      { OPENAI_API_KEY: 'k' },
      'target',
      'high',
    ).complete(ask('hi'));
    const r = fake.requests.at(-1)!;
    assert.equal(r.path, '/v1/responses');
    assert.equal(r.body.reasoning, undefined);
  });

  it('openai_chat: a reasoning model gets the system prompt as a developer message; tools drop the effort', async () => {
    const m = model(
      { backend: 'openai_chat', model: 'gpt-5', base_url: `${fake.url}/v1`, options: { provider: 'openai' } },
      { OPENAI_API_KEY: 'k' },
      'target',
      'medium',
    );
    await m.complete(
      ask('hi', {
        tools: [
          {
            name: 'lookup',
            description: 'Look a word up',
            parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
          },
        ],
      }),
    );
    const r = fake.requests.at(-1)!;
    assert.equal(r.body.messages[0].role, 'developer');
    assert.equal(r.body.tools[0].function.name, 'lookup');
    assert.equal(r.body.reasoning_effort, undefined);
  });

  it('openai_chat: models that need it go through the Responses API', async () => {
    const m = model(
      {
        backend: 'openai_chat',
        model: 'gpt-5-codex',
        base_url: `${fake.url}/v1`,
        max_output_tokens: 500,
        options: { provider: 'openai' },
      },
      { OPENAI_API_KEY: 'k' },
      'target',
      'low',
    );
    const res = await m.complete(ask('hello'));
    const r = fake.requests.at(-1)!;
    assert.equal(r.path, '/v1/responses');
    assert.equal(r.body.max_output_tokens, 500);
    assert.equal(r.body.reasoning.effort, 'low');
    assert.ok(JSON.stringify(r.body.input).includes('hello'));
    assert.equal(res.text, 'ok');
    assert.deepEqual(res.usage, { input: 1000, output: 200, cached: 400, reasoning: 50 });
    assert.equal(res.costUsd !== null, true);
  });

  it('openai_chat on Azure: deployment path, api-version, api-key header; unknown deployment price is null', async () => {
    const m = model(
      { backend: 'azure_openai', model: 'my-deployment', base_url: fake.url, options: { provider: 'azure' } },
      { AZURE_OPENAI_API_KEY: 'az-key' },
    );
    const res = await m.complete(ask('hi'));
    const r = fake.requests.at(-1)!;
    assert.equal(r.path, '/openai/deployments/my-deployment/chat/completions');
    assert.equal(r.query['api-version'], '2024-12-01-preview');
    assert.equal(r.headers['api-key'], 'az-key');
    assert.equal(res.costUsd, null);
  });

  it('openai_chat on Azure: the endpoint and version come from AZURE_OPENAI_* variables; an Entra token is sent as a bearer', async () => {
    const m = model(
      { backend: 'openai_chat', model: 'dep' },
      {
        AZURE_OPENAI_ENDPOINT: fake.url,
        AZURE_OPENAI_API_VERSION: '2025-01-01-preview',
        AZURE_OPENAI_AD_TOKEN: 'entra',
      },
    );
    await m.complete(ask('hi'));
    const r = fake.requests.at(-1)!;
    assert.equal(r.path, '/openai/deployments/dep/chat/completions');
    assert.equal(r.query['api-version'], '2025-01-01-preview');
    assert.equal(r.headers.authorization, 'Bearer entra');
    assert.equal(r.headers['api-key'], undefined);
  });

  it('anthropic: system at the top level, max_tokens, thinking budget, x-api-key; usage with cache reads', async () => {
    const m = model(
      {
        backend: 'anthropic',
        model: 'claude-sonnet-4-5',
        base_url: `${fake.url}/v1`,
        max_output_tokens: 1000,
        options: { thinking_budget: 2048 },
      },
      { ANTHROPIC_API_KEY: 'ant' },
    );
    const res = await m.complete(ask('hi'));
    const r = fake.requests.at(-1)!;
    assert.equal(r.path, '/v1/messages');
    assert.equal(r.headers['x-api-key'], 'ant');
    assert.ok(r.headers['anthropic-version']);
    assert.deepEqual(r.body.system, [{ type: 'text', text: 'You are terse.' }]);
    assert.equal(r.body.messages[0].role, 'user');
    assert.deepEqual(r.body.thinking, { type: 'enabled', budget_tokens: 2048 });
    assert.equal(r.body.max_tokens, 1000 + 2048);
    assert.deepEqual(res.usage, { input: 1000, output: 200, cached: 400, reasoning: 0 });
    assert.ok(Math.abs(res.costUsd! - (600 * 3 + 400 * 0.3 + 200 * 15) / 1e6) < 1e-12);
  });

  it('anthropic: no thinking for a model without it (the fake server refuses it as the API does), said once; capabilities override', async () => {
    const notices: string[] = [];
    const haiku = model(
      {
        backend: 'anthropic',
        model: 'claude-3-5-haiku-20241022',
        base_url: `${fake.url}/v1`,
        options: { thinking_budget: 2048 },
      },
      { ANTHROPIC_API_KEY: 'ant' },
      'target',
      '',
      notices,
    );
    await haiku.complete(ask('hi'));
    await haiku.complete(ask('hi'));
    assert.equal(fake.requests.at(-1)!.body.thinking, undefined);
    assert.equal(notices.length, 1);
    assert.match(
      notices[0]!,
      /does not take extended thinking \(options\.thinking_budget: 2048\).*capabilities\.thinking: true/,
    );
    const forced = model(
      {
        backend: 'anthropic',
        model: 'claude-3-5-haiku-20241022',
        base_url: `${fake.url}/v1`,
        capabilities: { thinking: true },
        options: { thinking_budget: 2048 },
      },
      { ANTHROPIC_API_KEY: 'ant' },
    );
    await assert.rejects(forced.complete(ask('hi')), /does not support thinking/);
  });

  it('anthropic: prompt-cache writes are read from the real usage shape and priced at the write rates', async () => {
    // 1,000 input tokens: 200 read from the cache, 500 written to it (100 of them for an hour), 300 plain.
    const cachy = await startFakeProvider({
      respond: () => ({
        text: 'ok',
        usage: { input: 1000, output: 50, cached: 200, cacheWrite: 500, cacheWrite1h: 100 },
      }),
    });
    try {
      const res = await model(
        { backend: 'anthropic', model: 'claude-sonnet-4-5', base_url: `${cachy.url}/v1` },
        { ANTHROPIC_API_KEY: 'a' },
      ).complete(ask('hi'));
      assert.deepEqual(res.usage, {
        input: 1000,
        output: 50,
        cached: 200,
        reasoning: 0,
        cacheWrite: 500,
        cacheWrite1h: 100,
      });
      // Sonnet 4.5: $3 in, $0.30 cache read, $3.75 5-minute write, $6 1-hour write, $15 out per 1M.
      assert.ok(
        Math.abs(res.costUsd! - (300 * 3 + 200 * 0.3 + 400 * 3.75 + 100 * 6 + 50 * 15) / 1e6) < 1e-12,
        String(res.costUsd),
      );
      const priced = await model(
        {
          backend: 'anthropic',
          model: 'claude-sonnet-4-5',
          base_url: `${cachy.url}/v1`,
          price: { input: 1, output: 1, cache_write: 10 },
        },
        { ANTHROPIC_API_KEY: 'a' },
      ).complete(ask('hi'));
      assert.ok(
        Math.abs(priced.costUsd! - (300 + 200 + 500 * 10 + 50) / 1e6) < 1e-12,
        'price.cache_write applies; cached input and 1-hour writes fall back',
      );
    } finally {
      await cachy.close();
    }
  });

  it('anthropic: JSON replies through structured output (newer models) or a forced JSON tool (older ones)', async () => {
    const json = await startFakeProvider({
      respond: (r) =>
        r.body.tools
          ? { toolCalls: [{ id: 't1', name: r.body.tools[0].name, arguments: { answer: 'tool' } }] }
          : { text: '{"answer": "format"}' },
    });
    try {
      const schema = z.object({ answer: z.string() });
      const newer = await model(
        { backend: 'anthropic', model: 'claude-sonnet-4-5', base_url: `${json.url}/v1` },
        { ANTHROPIC_API_KEY: 'a' },
      ).complete(ask('x', { schema }));
      assert.equal(json.requests.at(-1)!.body.output_config.format.type, 'json_schema');
      assert.deepEqual(newer.parsed, { answer: 'format' });
      const older = await model(
        { backend: 'anthropic', model: 'claude-3-5-haiku-20241022', base_url: `${json.url}/v1` },
        { ANTHROPIC_API_KEY: 'a' },
      ).complete(ask('x', { schema }));
      assert.equal(json.requests.at(-1)!.body.tool_choice.type, 'any');
      assert.deepEqual(older.parsed, { answer: 'tool' });
    } finally {
      await json.close();
    }
  });

  it('anthropic: the Messages API, not the claude CLI (claude_chat); a thinking budget under 1024 is refused', () => {
    assert.equal(getBackend('anthropic_chat')!.name, 'anthropic');
    assert.equal(getBackend('claude_chat')!.name, 'claude_chat');
    assert.throws(
      () =>
        model(
          { backend: 'anthropic', base_url: fake.url, options: { thinking_budget: 10 } },
          { ANTHROPIC_API_KEY: 'a' },
        ),
      /thinking_budget/,
    );
  });
});

describe('OpenAI-compatible servers', () => {
  let fake: FakeProvider;
  before(async () => {
    fake = await startFakeProvider({
      vllm: true,
      respond: (r) =>
        r.body.tools
          ? {
              toolCalls: [{ id: 'call_7', name: 'lookup', arguments: { word: 'skill' } }],
              usage: { input: 50, output: 5 },
            }
          : { text: 'plain', usage: { input: 30, output: 3 } },
    });
  });
  after(() => fake.close());

  it('openai_compatible: vLLM replies read, tool calls parsed, no key means no Authorization header, JSON schema sent', async () => {
    const m = model({ backend: 'vllm', model: 'meta/llama', base_url: `${fake.url}/v1`, temperature: 0.2 });
    const res = await m.complete(
      ask('define', {
        tools: [
          {
            name: 'lookup',
            description: 'd',
            parameters: { type: 'object', properties: { word: { type: 'string' } } },
          },
        ],
      }),
    );
    assert.deepEqual(res.toolCalls, [{ id: 'call_7', name: 'lookup', input: { word: 'skill' } }]);
    let r = fake.requests.at(-1)!;
    assert.equal(r.headers.authorization, undefined);
    assert.equal(r.body.temperature, 0.2);
    await m.complete(ask('x', { schema: z.object({ a: z.number() }) }));
    r = fake.requests.at(-1)!;
    assert.equal(r.body.response_format.type, 'json_schema');
    assert.equal(res.costUsd, null);
  });

  it('openai_compatible with json_schema off describes the schema in the prompt instead', async () => {
    const m = model(
      { backend: 'openai_compatible', model: 'm', base_url: `${fake.url}/v1`, json_schema: false },
      { OPENAI_COMPATIBLE_API_KEY: 'c' },
    );
    await m.complete(ask('x', { schema: z.object({ verdict: z.string() }) }));
    const r = fake.requests.at(-1)!;
    assert.equal(r.body.response_format, undefined);
    assert.match(r.body.messages[0].content, /JSON Schema/);
    assert.match(r.body.messages[0].content, /verdict/);
    assert.equal(r.headers.authorization, 'Bearer c');
  });

  it('qwen_chat: thinking switch as chat_template_kwargs, omitted at server_default; the base URL from QWEN_CHAT_BASE_URL', async () => {
    await model(
      { backend: 'qwen', options: { thinking_mode: 'disabled' } },
      { QWEN_CHAT_BASE_URL: `${fake.url}/v1` },
    ).complete(ask('a'));
    assert.deepEqual(fake.requests.at(-1)!.body.chat_template_kwargs, { enable_thinking: false });
    assert.equal(fake.requests.at(-1)!.body.model, 'Qwen/Qwen3.5-4B');
    await model({ backend: 'qwen_chat', base_url: `${fake.url}/v1` }).complete(ask('a'));
    assert.equal('chat_template_kwargs' in fake.requests.at(-1)!.body, false);
    await model(
      {
        backend: 'qwen_chat',
        base_url: `${fake.url}/v1`,
        options: { use_max_completion_tokens: true },
        max_output_tokens: 77,
      },
      { TARGET_QWEN_CHAT_THINKING_MODE: 'enabled' },
    ).complete(ask('a'));
    const b = fake.requests.at(-1)!.body;
    assert.deepEqual(b.chat_template_kwargs, { enable_thinking: true });
    assert.equal(b.max_completion_tokens, 77);
    assert.equal(b.max_tokens, undefined);
  });

  it('minimax_chat: thinking field, key required, regions checked', async () => {
    await model(
      { backend: 'minimax', model: 'MiniMax-M2', base_url: `${fake.url}/v1` },
      { MINIMAX_API_KEY: 'mm' },
    ).complete(ask('a'));
    const r = fake.requests.at(-1)!;
    assert.deepEqual(r.body.thinking, { type: 'adaptive' });
    assert.equal(r.headers.authorization, 'Bearer mm');
    assert.equal(r.body.chat_template_kwargs, undefined);
    assert.throws(
      () => model({ backend: 'minimax', options: { region: 'mars' } }, { MINIMAX_API_KEY: 'mm' }),
      /unknown MiniMax region 'mars'/,
    );
    assert.throws(
      () => model({ backend: 'minimax' }),
      (e) => e instanceof FatalModelError && /MINIMAX_API_KEY/.test(e.message),
    );
  });
});

describe('keys and endpoints', () => {
  it('a missing key names the variable to set; api_key_env is honoured', () => {
    assert.throws(
      () => model({ backend: 'openai_chat', model: 'gpt-4o' }),
      (e) => e instanceof FatalModelError && /set the environment variable OPENAI_API_KEY/.test(e.message),
    );
    assert.throws(
      () => model({ backend: 'anthropic', api_key_env: 'MY_CLAUDE_KEY' }),
      (e) => e instanceof FatalModelError && /MY_CLAUDE_KEY/.test(e.message),
    );
    assert.doesNotThrow(() => model({ backend: 'anthropic', api_key_env: 'MY_CLAUDE_KEY' }, { MY_CLAUDE_KEY: 'x' }));
  });

  it('a role-specific variable wins over the shared one', async () => {
    const fake = await startFakeProvider();
    try {
      await model(
        { backend: 'openai_chat', model: 'gpt-4o', base_url: `${fake.url}/v1`, options: { provider: 'openai' } },
        { OPENAI_API_KEY: 'shared', OPTIMIZER_OPENAI_API_KEY: 'mine' },
        'optimizer',
      ).complete(ask('x'));
      assert.equal(fake.requests[0]!.headers.authorization, 'Bearer mine');
    } finally {
      await fake.close();
    }
  });

  it('a bad base URL is a fatal error naming the key', () => {
    assert.throws(
      () => model({ backend: 'openai_compatible', base_url: 'localhost:8000' }),
      (e) => e instanceof FatalModelError && /base_url/.test(e.message),
    );
  });
});
