import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sumUsage } from '../../src/model/ledger.ts';
import { costOf, tablePrice } from '../../src/model/prices.ts';
import { buildRoleModels } from '../../src/model/stack.ts';
import type { ChatRequest } from '../../src/model/types.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';
import { tmpDir } from '../helpers/tmp.ts';

const ask = (text: string, purpose = 'rollout'): ChatRequest => ({ purpose, messages: [{ role: 'user', content: text }] });

describe('the ledger', () => {
  let fake: FakeProvider;
  before(async () => {
    let i = 0;
    fake = await startFakeProvider({ respond: () => ({ text: 'ok', usage: { input: 100 + i, output: 10 + (i % 7), cached: i % 3 === 0 ? 40 : 0, reasoning: i++ % 5 } }) });
  });
  after(() => fake.close());

  async function models(ledgerFile?: string) {
    const target = { backend: 'openai_compatible', model: 'gpt-4o-mini', base_url: `${fake.url}/v1`, max_retries: 2, backoff_s: 0.01 };
    const optimizer = { backend: 'openai_compatible', model: 'my-local-model', base_url: `${fake.url}/v1` };
    const { config } = configWith({ model: { target, optimizer }, cache: { mode: 'off' } });
    return buildRoleModels(config, { environment: {}, ...(ledgerFile ? { ledgerFile } : {}) });
  }

  it('sums tokens exactly as the server reported them, prices known models, and reports unknown prices as unknown', async () => {
    const m = await models();
    fake.faults.push({ status: 500 });
    await Promise.all(Array.from({ length: 12 }, (_, i) => m.target.complete(ask(`t${i}`))));
    await Promise.all(Array.from({ length: 5 }, (_, i) => m.optimizer.complete(ask(`o${i}`, i % 2 ? 'analyst' : 'merge'))));
    const sent = fake.usageSent();
    const t = m.ledger.totals();
    assert.equal(t.calls, 17);
    assert.equal(t.inputTokens, sent.input);
    assert.equal(t.outputTokens, sent.output);
    assert.equal(t.cachedTokens, sent.cached);
    assert.equal(t.reasoningTokens, sent.reasoning);
    assert.equal(t.unpricedCalls, 5);
    const targetCost = m.ledger
      .all()
      .filter((r) => r.role === 'target')
      .reduce((s, r) => s + costOf(r.usage, tablePrice('gpt-4o-mini'))!, 0);
    assert.ok(Math.abs(t.costUsd - targetCost) < 1e-12 && t.costUsd > 0);
    const stages = m.ledger.byPurpose();
    assert.equal(stages.rollout!.calls, 12);
    assert.ok(stages.rollout!.cost_usd! > 0);
    assert.equal(stages.analyst!.cost_usd, null);
    assert.equal(stages.merge!.calls, 3);
    const total = sumUsage(stages);
    assert.equal(total.cost_usd, null, 'a total over an unpriced stage is unknown, not a number');
    assert.equal(total.prompt_tokens, sent.input);
    assert.equal(m.ledger.all().filter((r) => r.retries === 1).length, 1);
  });

  it('a price in the config overrides the table', async () => {
    const r = { backend: 'openai_compatible', model: 'my-local-model', base_url: `${fake.url}/v1`, price: { input: 1, output: 2 } };
    const { config } = configWith({ model: { target: r, optimizer: r }, cache: { mode: 'off' } });
    const m = await buildRoleModels(config, { environment: {} });
    const res = await m.target.complete(ask('priced'));
    assert.ok(Math.abs(res.costUsd! - (res.usage.input * 1 + res.usage.output * 2) / 1e6) < 1e-15);
    assert.equal(m.ledger.totals().unpricedCalls, 0);
  });

  it('a resumed run replays its recorded calls for free, and its totals include the earlier process', async () => {
    const file = path.join(tmpDir(), 'calls.jsonl');
    const first = await models(file);
    for (let i = 0; i < 4; i++) await first.target.complete(ask(`r${i}`));
    const before = first.ledger.totals();
    const n = fake.requests.length;
    const second = await models(file);
    assert.deepEqual(second.ledger.totals(), before, 'the budget sees what earlier processes spent');
    for (let i = 0; i < 4; i++) assert.equal((await second.target.complete(ask(`r${i}`))).from, 'journal');
    assert.equal(fake.requests.length, n);
    await second.target.complete(ask('new'));
    assert.equal(second.ledger.totals().calls, before.calls + 1);
  });

  it('the table matches dated model names to their family and leaves unknown names unpriced', () => {
    assert.deepEqual(tablePrice('gpt-4o-2024-08-06'), tablePrice('gpt-4o'));
    assert.deepEqual(tablePrice('claude-sonnet-4-5-20250929'), tablePrice('claude-sonnet-4-5'));
    assert.notDeepEqual(tablePrice('gpt-4o-mini'), tablePrice('gpt-4o'));
    assert.equal(tablePrice('gpt-4o-custom-finetune'), undefined);
    assert.equal(tablePrice('Qwen/Qwen3.5-4B'), undefined);
    assert.equal(costOf({ input: 10, output: 1, cached: 0, reasoning: 0 }, undefined), null);
  });
});
