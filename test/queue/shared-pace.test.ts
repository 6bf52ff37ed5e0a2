/**
 * One pace per provider across workers: two model stacks (two workers) sharing a Redis start
 * their calls no closer than the role's rpm allows in all, and a `retry-after` one of them is told
 * holds back the other's calls too. Real HTTP against the fake provider, real Redis.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { ModelStack } from '../../src/model/stack.ts';
import type { ChatRequest } from '../../src/model/types.ts';
import { SharedPace } from '../../src/queue/shared-pace.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

const ask = (text: string): ChatRequest => ({ purpose: 'rollout', messages: [{ role: 'user', content: text }] });

describe('the pace shared by workers', () => {
  let fake: FakeProvider;
  let redis: TestRedis;
  const clients: Redis[] = [];

  before(async () => {
    [fake, redis] = await Promise.all([startFakeProvider(), startRedis()]);
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await Promise.all([fake.close(), redis.stop()]);
  });

  /** A worker's models: its own pools, the pace shared through Redis. */
  async function workerTarget(target: Record<string, unknown>) {
    const client = new Redis(redis.url);
    clients.push(client);
    const pace = new SharedPace(client);
    const role = {
      backend: 'openai_compatible',
      model: 'fake-model',
      base_url: `${fake.url}/v1`,
      max_retries: 3,
      backoff_s: 0.02,
      backoff_max_s: 0.1,
      timeout_s: 5,
      ...target,
    };
    const { config } = configWith({ model: { target: role, optimizer: role }, cache: { mode: 'off' } });
    const stack = new ModelStack(config, {
      environment: {},
      sharedPace: (endpoint, limits) => pace.gate(endpoint, limits.rpm),
    });
    return stack.model('target');
  }

  it('rpm holds across workers: the n-th call starts no sooner than n intervals after the first could', async () => {
    const [a, b] = await Promise.all([workerTarget({ rpm: 200 }), workerTarget({ rpm: 200 })]);
    // A call outside the pace marks, on the server's clock, a moment before any paced call starts.
    const plain = await workerTarget({ rpm: 0, pool: 'marker' });
    await plain.complete(ask('mark'));
    const mark = fake.requests.at(-1)!.at;
    const before = fake.requests.length;
    await Promise.all([a.complete(ask('a1')), b.complete(ask('b1')), a.complete(ask('a2')), b.complete(ask('b2'))]);
    const starts = fake.requests
      .slice(before)
      .map((r) => r.at)
      .sort((x, y) => x - y);
    assert.equal(starts.length, 4);
    // Start slots are 300 ms apart for the two workers together; a call may reach the server late
    // (a loaded machine), never early. Each worker's own pool alone would let a1 and b1 go at once.
    for (let i = 1; i < starts.length; i++)
      assert.ok(
        starts[i]! - mark >= i * 300 - 1,
        `call ${i + 1} started ${Math.round(starts[i]! - mark)} ms after the mark`,
      );
  });

  it("a retry-after told to one worker holds back the other's calls", async () => {
    const [a, b] = await Promise.all([workerTarget({ rpm: 0 }), workerTarget({ rpm: 0 })]);
    const before = fake.requests.length;
    fake.faults.push({ status: 429, headers: { 'retry-after': '1' } });
    const first = a.complete(ask('first'));
    // Once the first worker has been told to wait (its pause is in Redis), the other calls.
    const watcher = clients[0]!;
    while ((await watcher.keys('skillopt:pace:*:pause')).length === 0) await new Promise((r) => setImmediate(r));
    const told = fake.requests[before]!.at;
    await Promise.all([first, b.complete(ask('other'))]);
    const other = fake.requests.find((r, i) => i > before && JSON.stringify(r.body).includes('other'))!;
    assert.ok(other.at - told >= 950, `the other worker's call started ${other.at - told} ms after the 429`);
  });
});
