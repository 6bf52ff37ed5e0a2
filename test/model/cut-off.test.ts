import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { buildRoleModels, type ModelEvent } from '../../src/model/stack.ts';
import { completeJson } from '../../src/model/structured.ts';
import { InfraError, type ChatRequest } from '../../src/model/types.ts';
import { startFakeProvider, type FakeProvider, type Recorded } from '../helpers/fake-provider.ts';
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

describe('a structured reply cut off by the output token limit in the middle of its object', () => {
  const CUT = '{"patch": {"reasoning": "prices", "edits": [{"op": "append", "content": "- P';
  const WHOLE = '{"patch": {"reasoning": "prices", "edits": [{"op": "append", "content": "- Prices in USD."}]}}';
  const Patch = z.object({
    patch: z.object({ reasoning: z.string(), edits: z.array(z.object({ op: z.string(), content: z.string() })) }),
  });
  /** How the reply to a request of `limit` output tokens goes: cut off while the limit is 512, else whole (or `later`). */
  let later: 'whole' | 'cut' | 'refused' = 'whole';
  let finishes = true;
  let fake: FakeProvider;
  const limitOf = (r: Recorded): number => Number(r.body.max_tokens ?? r.body.max_output_tokens);
  before(
    async () =>
      (fake = await startFakeProvider({
        fault: (r) =>
          limitOf(r) > 512 && later === 'refused'
            ? { status: 400, message: `max_tokens is too large: ${limitOf(r)}. This model supports at most 512.` }
            : undefined,
        respond: (r) => {
          const cut = limitOf(r) <= 512 || later === 'cut';
          const finish = WIRES.find((w) => w.wire === wireOf(r.path))!.finish;
          return {
            text: cut ? CUT : WHOLE,
            ...(cut && finishes ? { finish } : {}),
            usage: { input: 40, output: cut ? limitOf(r) : 30 },
          };
        },
      })),
  );
  after(() => fake.close());
  const wireOf = (p: string) =>
    p.endsWith('/responses') ? 'Responses' : p.endsWith('/messages') ? 'Anthropic Messages' : 'Chat Completions';

  async function models(w: (typeof WIRES)[number]) {
    const role = { backend: w.backend, model: w.model, base_url: `${fake.url}/v1`, max_retries: 2, backoff_s: 0.01 };
    const { config } = configWith(
      { model: { target: role, optimizer: role, reasoning_effort: '' }, cache: { mode: 'off' } },
      w.environment,
    );
    const events: ModelEvent[] = [];
    return { m: await buildRoleModels(config, { environment: w.environment, onEvent: (e) => events.push(e) }), events };
  }
  const analyst = { purpose: 'analyst', messages: [{ role: 'user' as const, content: 'Reflect.' }], schema: Patch };

  for (const w of WIRES) {
    it(`${w.wire} (${w.finish}): asked again with twice the room, and the whole reply is the one used, paid for both`, async () => {
      later = 'whole';
      finishes = true;
      const { m, events } = await models(w);
      const before = fake.requests.length;
      const { value } = await completeJson(m.optimizer, { ...analyst, maxOutputTokens: 512 });
      assert.equal(value.patch.edits[0]!.content, '- Prices in USD.');
      assert.deepEqual(fake.requests.slice(before).map(limitOf), [512, 1024]);
      const retry = events.find((e) => e.type === 'model_retry');
      assert.ok(
        retry?.type === 'model_retry' &&
          /structured reply was cut off by the output token limit/.test(retry.last_error),
      );
      const call = m.ledger.all().at(-1)!;
      assert.deepEqual([call.usage.output, call.error], [512 + 30, undefined], 'the cut-off reply was paid for too');
      m.close();
    });
  }

  it('cut off again: the call fails as cut off, naming the limit to raise; nothing is made of the half object', async () => {
    later = 'cut';
    finishes = true;
    const { m } = await models(WIRES[0]!);
    const before = fake.requests.length;
    await assert.rejects(
      completeJson(m.optimizer, { ...analyst, maxOutputTokens: 512 }),
      (e) =>
        e instanceof InfraError &&
        e.kind === 'truncated' &&
        /cut off by the output token limit .*, and again with 1024 output tokens: raise model\.optimizer_max_completion_tokens/.test(
          e.message,
        ),
    );
    assert.equal(fake.requests.length - before, 2);
    m.close();
  });

  it('a provider refusing the larger limit fails the call as cut off, not the run', async () => {
    later = 'refused';
    finishes = true;
    const { m } = await models(WIRES[0]!);
    await assert.rejects(
      completeJson(m.optimizer, { ...analyst, maxOutputTokens: 512 }),
      (e) =>
        e instanceof InfraError &&
        e.kind === 'truncated' &&
        /a retry with 1024 output tokens was refused \(.*max_tokens is too large/.test(e.message),
    );
    m.close();
  });

  it('a reply that ends inside its object with no finish reason to say so is not repaired: it is asked for again', async () => {
    later = 'whole';
    finishes = false;
    const { m } = await models(WIRES[0]!);
    const before = fake.requests.length;
    let n = 0;
    const replies = await completeJson(
      { id: m.optimizer.id, complete: (req) => m.optimizer.complete({ ...req, maxOutputTokens: n++ ? 1024 : 512 }) },
      analyst,
    );
    assert.equal(replies.value.patch.edits[0]!.content, '- Prices in USD.');
    const [first, second] = fake.requests.slice(before);
    assert.equal(limitOf(first!), 512);
    assert.match(JSON.stringify(second!.body.messages.at(-1)), /ends before its JSON object does/);
    m.close();
  });
});
