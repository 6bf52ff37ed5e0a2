/**
 * Batch pricing against the fake provider's batch endpoints (OpenAI's Files and Batch API,
 * Anthropic's Message Batches, in their real shapes): a role with `batch: true` sends the calls
 * that can wait as one batch, through the real SDK's request bodies; each answer is the live one,
 * priced at half; progress is said while it waits; items the batch could not answer are made
 * live one by one; a stopped process leaves the batch journaled and the next one takes it up
 * instead of sending it again; a backend without a batch API is refused.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { customIdOf } from '../../src/model/batch/batch-transport.ts';
import { ModelStack } from '../../src/model/stack.ts';
import { readJsonLines } from '../../src/run/atomic.ts';
import { type ChatRequest, ModelConfigError, RunStop } from '../../src/model/types.ts';
import { type FakeProvider, type Recorded, startFakeProvider, textOfUser } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';
import { tmpDir } from '../helpers/tmp.ts';

const KEYS = { OPENAI_API_KEY: 'sk-batch-test', ANTHROPIC_API_KEY: 'sk-ant-batch-test' };

const question = (i: number): ChatRequest => ({
  purpose: 'rollout',
  system: 'Answer with the number only.',
  messages: [{ role: 'user', content: `What is ${i} + ${i}?` }],
});

type Backend = 'openai_chat' | 'anthropic';

function stackFor(fake: FakeProvider, backend: Backend, model: string, o: { batch?: boolean; dir?: string } = {}) {
  const loaded = configWith(
    {
      model: {
        target: {
          backend,
          model,
          base_url: `${fake.url}/v1`,
          batch: o.batch ?? true,
          batch_poll_s: 0.05,
          max_retries: 1,
          backoff_s: 0,
          ...(backend === 'openai_chat' ? { options: { provider: 'openai' } } : {}),
        },
      },
      // After Ctrl-C, the calls still waiting are given up this soon.
      run: { stop_grace_s: 0.3 },
    },
    KEYS,
  );
  loaded.config.cache.mode = 'off';
  const said: string[] = [];
  const dir = o.dir ?? tmpDir();
  const stack = new ModelStack(loaded.config, {
    environment: KEYS,
    ledgerFile: path.join(dir, 'calls.jsonl'),
    onEvent: (e) => {
      if (e.type === 'log') said.push(e.message);
    },
  });
  return { stack, said, dir };
}

/** The fake's answer: twice the number asked about, with usage that prices alike on both paths. */
const respond = (r: Recorded) => {
  const n = Number(textOfUser(r).match(/What is (\d+)/)?.[1]);
  return { text: String(2 * n), usage: { input: 1000, output: 10 } };
};

describe('batch pricing', () => {
  let fake: FakeProvider;
  before(async () => {
    fake = await startFakeProvider({ respond, batches: { takesMs: 200 } });
  });
  after(() => fake.close());

  for (const [backend, model, endpoint] of [
    ['openai_chat', 'gpt-4o-mini', '/v1/chat/completions'],
    ['openai_chat', 'gpt-5-codex', '/v1/responses'],
    ['anthropic', 'claude-sonnet-4-5', '/v1/messages'],
  ] as const) {
    it(`${backend} ${model}: the calls go as one batch to ${endpoint}, answered as live, at half the price`, async () => {
      const batchesBefore = fake.batches.batches.size;
      const callsBefore = fake.batches.calls.length;
      const { stack, said, dir } = stackFor(fake, backend, model);
      const batched = await stack.batchModel('target');
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => batched.complete(question(i + 1))));
      assert.deepEqual(
        answers.map((a) => a.text),
        Array.from({ length: 12 }, (_, i) => String(2 * (i + 1))),
      );
      const made = [...fake.batches.batches.values()].slice(batchesBefore);
      assert.equal(made.length, 1, 'one batch');
      assert.equal(made[0]!.items.length, 12);
      assert.equal(made[0]!.endpoint, endpoint);
      // The batch's bodies are the SDK's live bodies: the model, the messages, the output cap.
      assert.equal(made[0]!.items[0]!.body.model, model);
      // Every batch request went to the configured host with the configured key, and nowhere else.
      const calls = fake.batches.calls.slice(callsBefore);
      assert.ok(calls.length >= 3, `submit, polls and results: ${calls.map((c) => c.path).join(', ')}`);
      for (const c of calls) {
        assert.equal(c.headers.host, new URL(fake.url).host);
        if (backend === 'anthropic') assert.equal(c.headers['x-api-key'], KEYS.ANTHROPIC_API_KEY);
        else assert.equal(c.headers.authorization, `Bearer ${KEYS.OPENAI_API_KEY}`);
      }
      // Half the live price: the same call made live costs twice as much.
      const live = await stack.model('target');
      const again = await live.complete(question(1));
      for (const a of answers) {
        assert.equal(a.batched, true);
        assert.ok(Math.abs(a.costUsd! * 2 - again.costUsd!) < 1e-12, `${a.costUsd} vs ${again.costUsd}`);
      }
      stack.close();
      const records = readJsonLines<{ batch?: true }>(path.join(dir, 'calls.jsonl')).filter((r) => r.batch);
      assert.equal(records.length, 12, 'the ledger marks the batched calls');
      assert.ok(
        said.some((m) => /12 calls sent as batch \S+ \(.*half price/.test(m)),
        said.join('\n'),
      );
      assert.ok(
        said.some((m) => /batch \S+ ended after .*: 12 answered at the batch price$/.test(m)),
        said.join('\n'),
      );
    });
  }

  it('items the batch could not answer are made live, one by one, at the live price', async () => {
    const expiring = await startFakeProvider({
      respond,
      batches: { takesMs: 100, expire: (_id, index) => index === 1 || index === 3 },
    });
    try {
      const { stack, said, dir } = stackFor(expiring, 'anthropic', 'claude-sonnet-4-5');
      const batched = await stack.batchModel('target');
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => batched.complete(question(i + 1))));
      assert.deepEqual(
        answers.map((a) => a.text),
        ['2', '4', '6', '8', '10', '12'],
      );
      assert.equal(answers.filter((a) => a.batched).length, 4);
      assert.deepEqual(
        answers.map((a) => a.batched ?? false),
        [true, false, true, false, true, true],
      );
      assert.equal(expiring.requests.length, 6, 'four answered in the batch, the two expired ones live, once each');
      assert.ok(
        said.some((m) => /4 answered at the batch price; 2 failed and are made again one by one/.test(m)),
        said.join('\n'),
      );
      stack.close();
      assert.equal(readJsonLines(path.join(dir, 'calls.jsonl')).length, 6, 'one record per call');
    } finally {
      await expiring.close();
    }
  });

  it('a batch the provider refuses leaves its calls to the live path', async () => {
    const refusing = await startFakeProvider({
      respond,
      batches: {
        refuse: {
          code: 'token_limit_exceeded',
          message: 'Enqueued token limit reached for gpt-4o-mini in organization org-test.',
        },
      },
    });
    try {
      const { stack, said } = stackFor(refusing, 'openai_chat', 'gpt-4o-mini');
      const batched = await stack.batchModel('target');
      const answers = await Promise.all([1, 2, 3].map((i) => batched.complete(question(i))));
      assert.deepEqual(
        answers.map((a) => [a.text, a.batched ?? false]),
        [
          ['2', false],
          ['4', false],
          ['6', false],
        ],
      );
      assert.equal(refusing.batches.batches.size, 1);
      assert.equal(refusing.requests.length, 3, 'each call made live once');
      assert.ok(
        said.some((m) => /batch \S+ was refused \(token_limit_exceeded: Enqueued token limit reached/.test(m)),
        said.join('\n'),
      );
      stack.close();
    } finally {
      await refusing.close();
    }
  });

  it('Ctrl-C leaves the batch journaled; the next process takes it up instead of sending it again', async () => {
    const slow = await startFakeProvider({ respond, batches: { takesMs: 3000 } });
    try {
      const first = stackFor(slow, 'openai_chat', 'gpt-4o-mini');
      const batched = await first.stack.batchModel('target');
      const calls = Array.from({ length: 5 }, (_, i) => batched.complete(question(i + 1)));
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(slow.batches.batches.size, 1, 'sent');
      const stopped = performance.now();
      first.stack.admission.halt(new RunStop('interrupted', 'interrupted'));
      const outcomes = await Promise.allSettled(calls);
      for (const o of outcomes) if (o.status === 'rejected' && !(o.reason instanceof RunStop)) throw o.reason;
      const waited = performance.now() - stopped;
      assert.ok(outcomes.every((o) => o.status === 'rejected' && o.reason instanceof RunStop));
      assert.ok(waited < 2000, `stopped after ${waited} ms`);
      first.stack.close();
      const journal = fs.readFileSync(path.join(first.dir, 'batches.jsonl'), 'utf8').trim().split('\n');
      assert.equal(journal.length, 1);
      const sent = JSON.parse(journal[0]!);
      assert.equal(sent.event, 'sent');
      assert.equal(sent.custom_ids.length, 5);
      assert.ok(!journal[0]!.includes(KEYS.OPENAI_API_KEY), 'no key in the journal');

      const second = stackFor(slow, 'openai_chat', 'gpt-4o-mini', { dir: first.dir });
      const resumed = await second.stack.batchModel('target');
      const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => resumed.complete(question(i + 1))));
      assert.deepEqual(
        answers.map((a) => a.text),
        ['2', '4', '6', '8', '10'],
      );
      assert.equal(slow.batches.batches.size, 1, 'no second batch');
      assert.equal(slow.requests.length, 5, 'each item answered once, by the first batch');
      second.stack.close();
      const lines = fs.readFileSync(path.join(first.dir, 'batches.jsonl'), 'utf8').trim().split('\n');
      assert.deepEqual(
        lines.map((l) => JSON.parse(l).event),
        ['sent', 'ended'],
      );
    } finally {
      await slow.close();
    }
  });

  it('a backend without a batch API is refused by name', async () => {
    const loaded = configWith(
      {
        model: { target: { backend: 'openai_compatible', model: 'qwen3-8b', base_url: `${fake.url}/v1`, batch: true } },
      },
      KEYS,
    );
    const stack = new ModelStack(loaded.config, { environment: KEYS });
    await assert.rejects(
      stack.batchModel('target'),
      (e: Error) =>
        e instanceof ModelConfigError && /model\.target\.batch: openai_compatible .*has no batch API/.test(e.message),
    );
    stack.close();
  });

  it('ids in a batch are stable and within Anthropic’s pattern', () => {
    const id = customIdOf('/v1/messages', '{"model":"x"}');
    assert.match(id, /^[a-zA-Z0-9_-]{1,64}$/);
    assert.equal(id, customIdOf('/v1/messages', '{"model":"x"}'));
    assert.notEqual(id, customIdOf('/v1/chat/completions', '{"model":"x"}'));
  });
});
