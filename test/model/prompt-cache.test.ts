/**
 * Prompt caching against the fake Anthropic and OpenAI servers, which emulate each provider's
 * cache as documented (a breakpoint and a minimum prefix for Anthropic, automatic prefix caching
 * routed by `prompt_cache_key` for OpenAI) and report it in the real usage fields: the requests
 * carry the breakpoint or the key, the second rollout of a skill reads what the first wrote, the
 * ledger records the reads and writes, and they are priced at the cached rates. Off, nothing of
 * it is sent and every token is billed as input.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { promptCacheLine } from '../../src/engine/final-evaluation.ts';
import { anthropicCacheMinimum, openaiCacheKey } from '../../src/model/providers/prompt-cache.ts';
import { buildRoleModels } from '../../src/model/stack.ts';
import type { ChatRequest } from '../../src/model/types.ts';
import { type FakeProvider, startFakeProvider } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';

const KEYS = { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test' };

/** A skill of the paper's length (about 1,500 tokens), in the system prompt of every rollout. */
const SKILL = Array.from(
  { length: 120 },
  (_, i) => `${i + 1}. When a question names a unit, convert it before comparing (rule ${i}).`,
).join('\n');
const rollout = (item: string, skill = SKILL): ChatRequest => ({
  purpose: 'rollout',
  system: `Answer the question.\n\n## Skill\n\n${skill}\n\nPut the answer in <answer></answer>.`,
  skill,
  messages: [{ role: 'user', content: item }],
});

describe('prompt caching', () => {
  let fake: FakeProvider;
  before(async () => {
    fake = await startFakeProvider({
      caching: true,
      respond: () => ({ text: '<answer>4</answer>', usage: { input: 0, output: 5 } }),
    });
  });
  after(() => fake.close());

  const models = (backend: 'anthropic' | 'openai_chat', promptCache: boolean, model: string) => {
    const loaded = configWith(
      {
        model: {
          target: {
            backend,
            model,
            base_url: backend === 'anthropic' ? fake.url : `${fake.url}/v1`,
            prompt_cache: promptCache,
            ...(backend === 'openai_chat' ? { options: { provider: 'openai' } } : {}),
          },
        },
      },
      KEYS,
    );
    loaded.config.cache.mode = 'off';
    return buildRoleModels(loaded.config, { environment: KEYS });
  };

  it('Anthropic: a breakpoint on a long system prompt; the next rollout reads it at a tenth of the price', async () => {
    const m = await models('anthropic', true, 'claude-sonnet-4-5');
    const from = fake.requests.length;
    const first = await m.target.complete(rollout('How many kg is 4000 g?'));
    const second = await m.target.complete(rollout('How many m is 400 cm?'));
    const [a, b] = fake.requests.slice(from);
    assert.ok(Array.isArray(a!.body.system), 'the system prompt goes as blocks');
    assert.deepEqual(a!.body.system.at(-1).cache_control, { type: 'ephemeral' });
    assert.deepEqual(b!.body.system, a!.body.system, 'the same stable prefix');
    assert.ok((first.usage.cacheWrite ?? 0) > 1024 && first.usage.cached === 0, 'the first rollout writes it');
    assert.equal(second.usage.cached, first.usage.cacheWrite, 'the second reads all of it');
    assert.ok(!second.usage.cacheWrite);
    // claude-sonnet-4-5: $3 input, $0.30 cached reads, $3.75 writes, $15 output per million.
    const expected = (second.usage.input - second.usage.cached) * 3 + second.usage.cached * 0.3 + 5 * 15;
    assert.ok(Math.abs(second.costUsd! - expected / 1e6) < 1e-12, `${second.costUsd} vs ${expected / 1e6}`);
    const totals = m.ledger.totals();
    assert.equal(totals.cachedTokens, second.usage.cached);
    assert.equal(totals.cacheWriteTokens, first.usage.cacheWrite);
    const shares = m.ledger.cacheShares();
    assert.deepEqual(shares.target!.by_stage.rollout, {
      input: first.usage.input + second.usage.input,
      cached: second.usage.cached,
      written: first.usage.cacheWrite,
      share: Math.round((second.usage.cached / (first.usage.input + second.usage.input)) * 1e4) / 1e4,
    });
    assert.match(promptCacheLine(shares), /^prompt cache: read \d+% of the target's input$/);
    assert.equal(promptCacheLine({}), '');
    m.close();
  });

  it('Anthropic: no breakpoint under the model minimum, nor when prompt_cache is off', async () => {
    assert.equal(anthropicCacheMinimum('claude-opus-4-6'), 4096);
    assert.equal(anthropicCacheMinimum('anthropic/claude-sonnet-4-5-20250929'), 1024);
    const from = fake.requests.length;
    const short = await models('anthropic', true, 'claude-sonnet-4-5');
    await short.target.complete(rollout('2 + 2?', 'Add the numbers.'));
    const opus = await models('anthropic', true, 'claude-opus-4-6');
    const big = await opus.target.complete(rollout('How many kg is 4000 g?'));
    const off = await models('anthropic', false, 'claude-sonnet-4-5');
    const uncached = await off.target.complete(rollout('How many kg is 4000 g?'));
    const sent = fake.requests.slice(from);
    const breakpoints = (i: number) => JSON.stringify(sent[i]!.body).includes('cache_control');
    assert.equal(breakpoints(0), false, 'a short prompt has no breakpoint');
    assert.equal(breakpoints(1), false, "the skill is under Opus 4.6's 4,096 tokens");
    assert.equal(breakpoints(2), false, 'off: none');
    for (const r of [big, uncached]) assert.deepEqual([r.usage.cached, r.usage.cacheWrite ?? 0], [0, 0]);
    for (const m of [short, opus, off]) m.close();
  });

  it('OpenAI: one prompt_cache_key per role and start of the system prompt; the second rollout reads its prefix', async () => {
    const m = await models('openai_chat', true, 'gpt-5.4');
    const from = fake.requests.length;
    const first = await m.target.complete(rollout('How many kg is 4000 g?'));
    const second = await m.target.complete(rollout('How many m is 400 cm?'));
    const edited = await m.target.complete(rollout('How many m is 400 cm?', `${SKILL}\nA new rule.`));
    await m.target.complete(rollout('How many m is 400 cm?', 'A skill of another task altogether.'));
    const [a, b, c, d] = fake.requests.slice(from);
    assert.equal(a!.body.prompt_cache_key, openaiCacheKey('target', rollout('x')));
    assert.equal(b!.body.prompt_cache_key, a!.body.prompt_cache_key);
    assert.equal(c!.body.prompt_cache_key, a!.body.prompt_cache_key, 'a candidate that starts alike shares the key');
    assert.ok(edited.usage.cached >= 1024, "and reads the prefix it shares with its parent's rollouts");
    assert.notEqual(d!.body.prompt_cache_key, a!.body.prompt_cache_key, 'another start, another key');
    assert.equal(first.usage.cached, 0);
    assert.ok(second.usage.cached >= 1024 && second.usage.cached % 128 === 0, String(second.usage.cached));
    // gpt-5.4: $2.50 input, $0.25 cached, $15 output per million.
    const expected = (second.usage.input - second.usage.cached) * 2.5 + second.usage.cached * 0.25 + 5 * 15;
    assert.ok(Math.abs(second.costUsd! - expected / 1e6) < 1e-12);
    m.close();
    const off = await models('openai_chat', false, 'gpt-5.4');
    await off.target.complete(rollout('How many kg is 4000 g?'));
    assert.equal(fake.requests.at(-1)!.body.prompt_cache_key, undefined);
    off.close();
  });
});
