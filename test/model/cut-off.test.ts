import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildRoleModels } from '../../src/model/stack.ts';
import { InfraError, type ChatRequest } from '../../src/model/types.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';

const ask = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  purpose: 'rollout',
  messages: [{ role: 'user', content: 'Prove it.' }],
  ...extra,
});

/** The three wires, each with its own words for "stopped by the output limit". */
const WIRES: { wire: string; backend: string; model: string; finish: string; environment: Record<string, string> }[] = [
  { wire: 'Chat Completions', backend: 'openai_compatible', model: 'qwen3-8b', finish: 'length', environment: {} },
  {
    wire: 'Responses',
    backend: 'openai_chat',
    model: 'gpt-5-codex',
    finish: 'max_output_tokens',
    environment: { OPENAI_API_KEY: 'sk-test-0000000000' },
  },
  {
    wire: 'Anthropic Messages',
    backend: 'anthropic',
    model: 'claude-sonnet-4-5',
    finish: 'max_tokens',
    environment: { ANTHROPIC_API_KEY: 'sk-ant-test-000000' },
  },
];

describe('a reply cut off by the output token limit before any answer', () => {
  let fake: FakeProvider;
  let text = '';
  before(
    async () =>
      (fake = await startFakeProvider({
        respond: (r) => ({
          text,
          finish: WIRES.find((w) => w.wire === wireOf(r.path))!.finish,
          usage: { input: 40, output: 512, reasoning: 512 },
        }),
      })),
  );
  after(() => fake.close());
  const wireOf = (p: string) =>
    p.endsWith('/responses') ? 'Responses' : p.endsWith('/messages') ? 'Anthropic Messages' : 'Chat Completions';

  async function models(w: (typeof WIRES)[number]) {
    const role = {
      backend: w.backend,
      model: w.model,
      base_url: `${fake.url}/v1`,
      max_output_tokens: 512,
      max_retries: 2,
      backoff_s: 0.01,
      reasoning_effort: 'none',
    };
    const { config } = configWith(
      { model: { target: role, optimizer: role, reasoning_effort: '' }, cache: { mode: 'off' } },
      w.environment,
    );
    return buildRoleModels(config, { environment: w.environment });
  }

  for (const w of WIRES) {
    it(`${w.wire} (${w.finish}): an infrastructure error naming the limit to raise, not an empty answer, and not retried`, async () => {
      text = '';
      const m = await models(w);
      const before = fake.requests.length;
      await assert.rejects(
        m.target.complete(ask()),
        (e) =>
          e instanceof InfraError &&
          e.kind === 'truncated' &&
          /512 output tokens/.test(e.message) &&
          /raise model\.target\.max_output_tokens/.test(e.message),
      );
      assert.equal(fake.requests.length - before, 1, 'a retry would be cut off the same way');
      assert.equal(wireOf(fake.requests.at(-1)!.path), w.wire);
      assert.match(m.ledger.all().at(-1)!.error!, /cut off/);
      m.close();
    });
  }

  it("names the limit the call was given: the env's for rollouts, the optimizer's for its calls", async () => {
    text = '';
    const m = await models(WIRES[0]!);
    await assert.rejects(m.target.complete(ask({ maxOutputTokens: 512 })), /raise env\.max_completion_tokens/);
    await assert.rejects(
      m.optimizer.complete(ask({ purpose: 'analyst', maxOutputTokens: 512 })),
      /raise model\.optimizer_max_completion_tokens/,
    );
    await assert.rejects(
      m.optimizer.complete(ask({ purpose: 'rewrite', maxOutputTokens: 512 })),
      /raise model\.rewrite_max_completion_tokens/,
    );
    m.close();
  });

  it('a reply cut off after some text is the answer as far as it goes', async () => {
    text = 'The first step is';
    const m = await models(WIRES[0]!);
    assert.equal((await m.target.complete(ask())).text, 'The first step is');
    m.close();
  });
});
