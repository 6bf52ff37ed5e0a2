import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { madeFor, stepWork } from '../../src/model/attribution.ts';
import { Ledger, sentFile, sumUsage, type CallRecord } from '../../src/model/ledger.ts';
import { costOf, tablePrice } from '../../src/model/prices.ts';
import { backendNames, getBackend } from '../../src/model/registry.ts';
import { buildRoleModels } from '../../src/model/stack.ts';
import type { ChatRequest } from '../../src/model/types.ts';
import { fakeProviderFetch, type InProcessFake } from '../helpers/fake-provider.ts';
import { ROOT } from '../helpers/cli.ts';
import { configWith } from '../helpers/model-config.ts';
import { tmpDir } from '../helpers/tmp.ts';

const ask = (text: string, purpose = 'rollout'): ChatRequest => ({
  purpose,
  messages: [{ role: 'user', content: text }],
});

describe('the ledger', () => {
  let fake: InProcessFake;
  before(async () => {
    let i = 0;
    fake = fakeProviderFetch({
      respond: () => ({
        text: 'ok',
        usage: { input: 100 + i, output: 10 + (i % 7), cached: i % 3 === 0 ? 40 : 0, reasoning: i++ % 5 },
      }),
    });
  });

  async function models(ledgerFile?: string) {
    const target = {
      backend: 'openai_compatible',
      model: 'gpt-4o-mini',
      base_url: `${fake.url}/v1`,
      max_retries: 2,
      backoff_s: 0.01,
    };
    const optimizer = { backend: 'openai_compatible', model: 'my-local-model', base_url: `${fake.url}/v1` };
    const { config } = configWith({ model: { target, optimizer }, cache: { mode: 'off' } });
    return buildRoleModels(config, { fetch: fake.fetch, environment: {}, ...(ledgerFile ? { ledgerFile } : {}) });
  }

  it('sums tokens exactly as the server reported them, prices known models, and reports unknown prices as unknown', async () => {
    const m = await models();
    fake.faults.push({ status: 500 });
    await Promise.all(Array.from({ length: 12 }, (_, i) => m.target.complete(ask(`t${i}`))));
    await Promise.all(
      Array.from({ length: 5 }, (_, i) => m.optimizer.complete(ask(`o${i}`, i % 2 ? 'analyst' : 'merge'))),
    );
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
    const r = {
      backend: 'openai_compatible',
      model: 'my-local-model',
      base_url: `${fake.url}/v1`,
      price: { input: 1, output: 2 },
    };
    const { config } = configWith({ model: { target: r, optimizer: r }, cache: { mode: 'off' } });
    const m = await buildRoleModels(config, { fetch: fake.fetch, environment: {} });
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

  it("a worker job's calls are recorded once, also when a resumed trainer takes the same finished job again", () => {
    const file = path.join(tmpDir(), 'calls.jsonl');
    const call = (key: string): CallRecord => ({
      time: '2026-12-01T01:33:57.315Z',
      key,
      role: 'target',
      model: 'sim:sim-1',
      purpose: 'rollout',
      usage: { input: 122, output: 8, cached: 0, reasoning: 0 },
      latency_ms: 60,
      retries: 0,
      from: 'provider',
      cost_usd: 0,
    });
    const first = new Ledger(file);
    first.recordJob('job-a', [call('k1')]);
    first.recordJob('job-a', [call('k1')]);
    // The trainer is killed here; the one that resumes reads the same file.
    const resumed = new Ledger(file);
    resumed.recordJob('job-a', [call('k1')]);
    resumed.recordJob('job-b', [call('k2'), call('k3')]);
    const lines = fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { key: string; job: string });
    assert.deepEqual(
      lines.map((l) => [l.job, l.key]),
      [
        ['job-a', 'k1'],
        ['job-b', 'k2'],
        ['job-b', 'k3'],
      ],
    );
    assert.equal(new Ledger(file).totals().calls, 3);
  });

  it('the table matches dated model names to their family and leaves unknown names unpriced', () => {
    assert.deepEqual(tablePrice('gpt-4o-2024-08-06'), tablePrice('gpt-4o'));
    assert.deepEqual(tablePrice('claude-sonnet-4-5-20250929'), tablePrice('claude-sonnet-4-5'));
    assert.notDeepEqual(tablePrice('gpt-4o-mini'), tablePrice('gpt-4o'));
    assert.equal(tablePrice('gpt-4o-custom-finetune'), undefined);
    assert.equal(tablePrice('my-azure-deployment'), undefined);
    assert.deepEqual(tablePrice('gpt-5.5-2026-04-23'), tablePrice('gpt-5.5'));
    assert.equal(costOf({ input: 10, output: 1, cached: 0, reasoning: 0 }, undefined), null);
  });

  it('every default model has a price: each model of the shipped configs and each backend default', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.yaml')) files.push(p);
      }
    };
    walk(path.join(ROOT, 'configs'));
    assert.ok(files.length >= 7, `${files.length} config files`);
    const unpriced: string[] = [];
    for (const file of files) {
      const { config } = loadConfig(file, { environment: {} });
      for (const role of ['target', 'optimizer', 'judge'] as const) {
        const rc = config.model[role] as { backend: string; model: string; price?: unknown };
        if (rc.backend !== 'sim' && !rc.price && !tablePrice(rc.model))
          unpriced.push(`${path.relative(ROOT, file)}: model.${role} ${rc.model}`);
      }
    }
    const defaults = new Set(backendNames().map((n) => getBackend(n)!));
    // Copilot's and Cursor's CLIs pick their model when none is named, or name models of their own: their cost is unknown unless a price is set.
    const cliChooses = new Set(['copilot_chat', 'copilot_exec', 'cursor_exec']);
    for (const spec of defaults)
      if (spec.name !== 'sim' && !cliChooses.has(spec.name) && !tablePrice(spec.defaultModel))
        unpriced.push(`backend ${spec.name}: ${spec.defaultModel}`);
    assert.deepEqual(unpriced, []);
  });
});

describe('prompt-cache writes in the ledger', () => {
  it('calls.jsonl records cache-write tokens and their cost; the totals count them', async () => {
    const fake = fakeProviderFetch({
      respond: () => ({ text: 'ok', usage: { input: 2000, output: 100, cached: 0, cacheWrite: 1500 } }),
    });
    const role = { backend: 'anthropic', model: 'claude-haiku-4-5', base_url: `${fake.url}/v1` };
    const { config } = configWith({ model: { target: role, optimizer: role }, cache: { mode: 'off' } });
    const file = path.join(tmpDir(), 'calls.jsonl');
    const m = await buildRoleModels(config, {
      fetch: fake.fetch,
      environment: { ANTHROPIC_API_KEY: 'k' },
      ledgerFile: file,
    });
    await m.target.complete(ask('x'));
    m.close();
    const [rec] = fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(rec.usage.cacheWrite, 1500);
    // Haiku 4.5: $1 in, $1.25 per 5-minute cache write, $5 out per 1M.
    assert.ok(Math.abs(rec.cost_usd - (500 * 1 + 1500 * 1.25 + 100 * 5) / 1e6) < 1e-12, String(rec.cost_usd));
    assert.equal(m.ledger.totals().cacheWriteTokens, 1500);
  });

  it('an OpenAI-compatible gateway that reports cache_write_tokens: recorded, at the input rate unless a write rate is set', async () => {
    const fake = fakeProviderFetch({
      respond: () => ({ text: 'ok', usage: { input: 1000, output: 10, cached: 100, cacheWrite: 400 } }),
    });
    const role = {
      backend: 'openai_compatible',
      model: 'gw-model',
      base_url: `${fake.url}/v1`,
      price: { input: 2, output: 4, cached_input: 1 },
    };
    const { config } = configWith({
      model: { target: role, optimizer: { ...role, price: { ...role.price, cache_write: 3 } } },
      cache: { mode: 'off' },
    });
    const m = await buildRoleModels(config, { fetch: fake.fetch, environment: {} });
    const plain = await m.target.complete(ask('x'));
    assert.equal(plain.usage.cacheWrite, 400);
    assert.ok(Math.abs(plain.costUsd! - (900 * 2 + 100 * 1 + 10 * 4) / 1e6) < 1e-12);
    const written = await m.optimizer.complete(ask('x'));
    assert.ok(Math.abs(written.costUsd! - (500 * 2 + 100 * 1 + 400 * 3 + 10 * 4) / 1e6) < 1e-12);
  });
});

describe('a resumed run counts as an uninterrupted one', () => {
  let fake: InProcessFake;
  before(() => {
    fake = fakeProviderFetch({ respond: () => ({ text: 'ok', usage: { input: 100, output: 10, cached: 0 } }) });
  });
  const role = () => ({ backend: 'openai_compatible', model: 'gpt-4o-mini', base_url: `${fake.url}/v1` });
  const stack = (ledgerFile: string) => {
    const { config } = configWith({ model: { target: role(), optimizer: role() }, cache: { mode: 'off' } });
    return buildRoleModels(config, { fetch: fake.fetch, environment: {}, ledgerFile });
  };

  it('a step counts its own calls, those an earlier process made for it included, once each', async () => {
    const file = path.join(tmpDir(), 'calls.jsonl');
    const first = await stack(file);
    await madeFor(stepWork(1), () => first.target.complete(ask('step one')));
    await madeFor(stepWork(2), () => first.target.complete(ask('step two, made before the process died')));
    first.close();

    const second = await stack(file);
    const before = fake.requests.length;
    // Step 2 asks again what it asked before (replayed: the same call), and asks what step 1 asked
    // (replayed too, but a call of its own, as an uninterrupted run would have made it).
    await madeFor(stepWork(2), () => second.target.complete(ask('step two, made before the process died')));
    await madeFor(stepWork(2), () => second.target.complete(ask('step one')));
    assert.equal(fake.requests.length, before, 'both answers come from the record');
    assert.equal(second.ledger.forStep(1).rollout?.calls, 1);
    assert.equal(second.ledger.forStep(2).rollout?.calls, 2);
    assert.equal(second.ledger.forStep(2).rollout?.prompt_tokens, 200);
    assert.equal(second.ledger.forStep(2).rollout?.cost_usd, first.ledger.forStep(2).rollout?.cost_usd);
    // Over the run: three calls, as an uninterrupted run records them; two were paid.
    assert.equal(second.ledger.byPurpose().rollout?.calls, 3);
    assert.equal(second.ledger.totals().calls, 2);
    second.close();
  });

  it('a call sent by a process that died before its answer came back counts against the limits', async () => {
    const file = path.join(tmpDir(), 'calls.jsonl');
    const first = await stack(file);
    await first.target.complete(ask('answered'));
    first.close();
    // What a process killed with two calls in flight leaves: their ids journaled as sent, no records.
    fs.appendFileSync(sentFile(file), '{"id":"lost1","key":"k1"}\n{"id":"lost2","key":"k2"}\n');
    const ledger = new Ledger(file);
    assert.equal(ledger.lostCalls, 2);
    assert.equal(ledger.totals().calls, 3, 'the answered call and the two sent');
    ledger.close();
  });
});
