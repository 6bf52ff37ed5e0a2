import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CallPool, type Clock } from '../../src/model/call-pool.ts';
import { ScheduledModel } from '../../src/model/call-scheduler.ts';
import { buildRoleModels, type RoleModels } from '../../src/model/stack.ts';
import {
  FatalModelError,
  InfraError,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
} from '../../src/model/types.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';

/** A clock the test moves by hand: timers fire in order as time advances, none while the loop is stalled. */
class VirtualClock implements Clock {
  private t = 0;
  private timers: { at: number; fn: () => void }[] = [];
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const timer = { at: this.t + ms, fn };
    this.timers.push(timer);
    return timer;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t !== handle);
  }
  /** Time passes, each timer firing at its moment. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.t = Math.max(this.t, due.at);
      this.clearTimeout(due);
      due.fn();
    }
    this.t = end;
  }
  /** Time passes with the loop busy: the timers that came due fire only at its end. */
  stall(ms: number): void {
    this.t += ms;
    this.advance(0);
  }
}

const ask = (text: string): ChatRequest => ({ purpose: 'rollout', messages: [{ role: 'user', content: text }] });

/** Target and optimizer on the fake server as an OpenAI-compatible endpoint, with fast retries. */
async function stack(fake: FakeProvider, target: Record<string, unknown> = {}): Promise<RoleModels> {
  const role = {
    backend: 'openai_compatible',
    model: 'fake-model',
    base_url: `${fake.url}/v1`,
    max_retries: 3,
    backoff_s: 0.02,
    backoff_max_s: 0.1,
    timeout_s: 2,
  };
  const { config } = configWith({ model: { target: { ...role, ...target }, optimizer: role }, cache: { mode: 'off' } });
  return buildRoleModels(config, { environment: {} });
}

describe('retries', () => {
  let fake: FakeProvider;
  before(async () => (fake = await startFakeProvider()));
  after(() => fake.close());

  for (const [name, fault] of [
    ['500', { status: 500 }],
    ['503', { status: 503 }],
    ['a reset connection', { kind: 'reset' }],
    ['malformed JSON', { kind: 'malformed' }],
    ['an empty reply', { kind: 'empty' }],
    ['429 without retry-after', { status: 429 }],
  ] as const) {
    it(`${name} is retried, and the answer comes back with its retry count`, async () => {
      const m = await stack(fake);
      const before = fake.requests.length;
      fake.faults.push(fault as never, fault as never);
      const res = await m.target.complete(ask(`q-${name}`));
      assert.equal(res.text, `echo: q-${name}`);
      assert.equal(res.retries, 2);
      assert.equal(fake.requests.length - before, 3);
      const rec = m.ledger.all().at(-1)!;
      assert.equal(rec.retries, 2);
      assert.equal(rec.error, undefined);
    });
  }

  it('a hung connection times out and is retried', async () => {
    const m = await stack(fake, { timeout_s: 0.3 });
    fake.faults.push({ kind: 'hang' });
    const t0 = performance.now();
    const res = await m.target.complete(ask('hang'));
    assert.equal(res.retries, 1);
    assert.ok(performance.now() - t0 >= 290);
  });

  it('a body that drips in past the per-call timeout is a timeout, not an unreadable reply', async () => {
    const m = await stack(fake, { timeout_s: 0.5, max_retries: 0 });
    fake.faults.push({ kind: 'drip' });
    await assert.rejects(
      m.target.complete(ask('drip')),
      (e) =>
        e instanceof InfraError &&
        e.kind === 'timeout' &&
        /no complete reply within 0\.5 s \(model\.target\.timeout_s\)/.test(e.message),
    );
    assert.match(m.ledger.all().at(-1)!.error!, /timeout_s/);
  });

  it('429 with retry-after waits as long as the server asked', async () => {
    const m = await stack(fake);
    const before = fake.requests.length;
    fake.faults.push({ status: 429, headers: { 'retry-after': '1' } });
    await m.target.complete(ask('ra'));
    const [first, second] = fake.requests.slice(before);
    assert.ok(second!.at - first!.at >= 950, `waited ${second!.at - first!.at} ms`);
    assert.equal(m.pools.get('target')!.stats.decreases, 1);
  });

  it('after the last retry the call fails with an InfraError of the right kind, recorded in the ledger', async () => {
    const m = await stack(fake);
    const before = fake.requests.length;
    for (let i = 0; i < 4; i++) fake.faults.push({ status: 503 });
    await assert.rejects(
      m.target.complete(ask('down')),
      (e) => e instanceof InfraError && e.kind === 'server' && e.retries === 3 && /after 4 attempts/.test(e.message),
    );
    assert.equal(fake.requests.length - before, 4);
    const rec = m.ledger.all().at(-1)!;
    assert.match(rec.error!, /InfraError/);
    assert.equal(rec.retries, 3);
    assert.equal(m.ledger.totals().calls, 1);
  });

  for (const [status, pattern] of [
    [401, /refused the credentials/],
    [403, /refused the credentials/],
    [404, /does not exist/],
    [400, /rejected a request built from the configuration/],
  ] as const) {
    it(`${status} fails at once with a FatalModelError`, async () => {
      const m = await stack(fake);
      const before = fake.requests.length;
      fake.faults.push({ status });
      await assert.rejects(
        m.optimizer.complete(ask('x')),
        (e) => e instanceof FatalModelError && pattern.test(e.message) && e.message.includes('model.optimizer'),
      );
      assert.equal(fake.requests.length - before, 1);
    });
  }

  it('a 400 refusing the reasoning effort names the setting that leaves it out', async () => {
    const m = await stack(fake);
    fake.faults.push({
      status: 400,
      message: "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
      code: 'unsupported_parameter',
      param: 'reasoning_effort',
    });
    await assert.rejects(
      m.target.complete(ask('effort')),
      (e) =>
        e instanceof FatalModelError && /set model\.target\.capabilities\.reasoning_effort: false$/.test(e.message),
    );
  });

  it('a 400 about this request alone (context too long) is not retried and not fatal', async () => {
    const m = await stack(fake);
    fake.faults.push({
      status: 400,
      message: "This model's maximum context length is 8192 tokens",
      code: 'context_length_exceeded',
    });
    await assert.rejects(m.target.complete(ask('long')), (e) => e instanceof InfraError && e.kind === 'other');
  });

  it('429 for exhausted quota stops the run instead of retrying', async () => {
    const m = await stack(fake);
    fake.faults.push({ status: 429, message: 'You exceeded your current quota', code: 'insufficient_quota' });
    await assert.rejects(m.target.complete(ask('q')), FatalModelError);
  });
});

describe('backoff', () => {
  it('waits base·2^n between retries, capped (jitter pinned at its top)', async () => {
    const fake = await startFakeProvider();
    try {
      const m = await stack(fake);
      const inner = (m.target as unknown as { inner: { inner: ChatModel } }).inner.inner;
      const scheduled = new ScheduledModel(
        inner,
        new CallPool('t', { concurrency: 1, rpm: 0, tpm: 0 }),
        { maxRetries: 3, timeoutMs: 2000, backoffMs: 80, backoffMaxMs: 250, random: () => 1 },
        'model.target',
      );
      assert.deepEqual(
        [0, 1, 2, 3].map((n) => scheduled.backoff(n)),
        [80, 160, 250, 250],
      );
      fake.faults.push({ status: 500 }, { status: 502 }, { status: 503 });
      await scheduled.complete(ask('b'));
      const at = fake.requests.map((r) => r.at);
      const gaps = at.slice(1).map((t, i) => t - at[i]!);
      for (const [i, gap] of gaps.entries())
        assert.ok(gap >= [80, 160, 250][i]! - 5, `retry ${i + 1} came ${gap} ms after the failure`);
    } finally {
      await fake.close();
    }
  });

  it('jitter spreads the waits between half and all of the ceiling', () => {
    const pool = new CallPool('t', { concurrency: 1, rpm: 0, tpm: 0 });
    const lo = new ScheduledModel(
      { id: 'x', complete: async () => ({}) as ChatResponse },
      pool,
      { maxRetries: 1, timeoutMs: 1, backoffMs: 100, backoffMaxMs: 1000, random: () => 0 },
      'm',
    );
    assert.equal(lo.backoff(2), 200);
  });
});

describe('the limiter', () => {
  it('never exceeds its concurrency', async () => {
    const fake = await startFakeProvider({ latencyMs: 30 });
    try {
      const m = await stack(fake, { concurrency: 3 });
      await Promise.all(Array.from({ length: 24 }, (_, i) => m.target.complete(ask(`c${i}`))));
      assert.equal(fake.maxInFlight(), 3);
      assert.equal(m.pools.get('target')!.stats.maxActive, 3);
    } finally {
      await fake.close();
    }
  });

  it('never exceeds its RPM over HTTP: the n-th start comes no sooner than n·60/rpm s after the first', async () => {
    const fake = await startFakeProvider();
    try {
      const m = await stack(fake, { rpm: 1200, concurrency: 16 });
      await Promise.all(Array.from({ length: 12 }, (_, i) => m.target.complete(ask(`r${i}`))));
      const starts = m.pools.get('target')!.stats.recentStarts;
      assert.equal(starts.length, 12);
      for (let i = 1; i < starts.length; i++)
        assert.ok(starts[i]! - starts[0]! >= i * 50 - 0.1, `start ${i} at ${starts[i]! - starts[0]!} ms`);
      assert.equal(fake.requests.length, 12);
    } finally {
      await fake.close();
    }
  });

  it("RPM pacing on the pool's clock: one start per interval; a late timer catches up at twice the pace; a stalled loop never releases a burst", () => {
    const clock = new VirtualClock();
    const pool = new CallPool('t', { concurrency: 16, rpm: 1200, tpm: 0 }, clock);
    for (let i = 0; i < 12; i++) void pool.acquire(0);
    const started = () => pool.stats.started;
    assert.equal(started(), 1, 'the first starts at once');
    clock.advance(49);
    assert.equal(started(), 1);
    clock.advance(1);
    assert.equal(started(), 2, 'the second one interval (50 ms) later');
    clock.advance(100);
    assert.equal(started(), 4);
    // The event loop is busy for 200 ms (t 150 → 350): when it is free, one call starts, not the four that were due.
    clock.stall(200);
    assert.equal(started(), 5);
    clock.advance(49);
    assert.equal(started(), 5);
    clock.advance(1);
    assert.equal(started(), 6, 'then the pace starts afresh');
    // A timer 30 ms late (due at 450, fires at 480): the start after it comes half an interval later, to catch up.
    clock.stall(80);
    assert.equal(started(), 7);
    clock.advance(24);
    assert.equal(started(), 7);
    clock.advance(1);
    assert.equal(started(), 8, 'caught up at 25 ms');
    clock.advance(1000);
    assert.equal(started(), 12);
    // Over the whole run, no window of 250 ms holds more than its share (5) plus one for a catch-up.
    const at = pool.stats.recentStarts;
    for (const t of at) assert.ok(at.filter((u) => u >= t && u < t + 250).length <= 6, `starts ${at}`);
  });

  it('TPM: calls wait for the token bucket, which holds ten seconds of tokens and refills continuously', async () => {
    const fake = await startFakeProvider({ respond: () => ({ text: 'ok', usage: { input: 600, output: 0 } }) });
    try {
      // 36,000 tokens per minute = 600 per second, a bucket of 6,000; each call is 600 tokens (2,400 characters).
      const m = await stack(fake, { tpm: 36_000, concurrency: 16 });
      await Promise.all(Array.from({ length: 12 }, (_, i) => m.target.complete(ask(String(i % 10).repeat(2400)))));
      const starts = m.pools.get('target')!.stats.recentStarts;
      const at = starts.map((t) => t - starts[0]!);
      for (const [i, t] of at.entries())
        assert.ok((i + 1) * 600 <= 6000 + (600 * t) / 1000 + 1, `call ${i + 1} started at ${t} ms`);
      assert.ok(at.at(-1)! >= 1900, `the last call started at ${at.at(-1)} ms`);
    } finally {
      await fake.close();
    }
  });

  it('AIMD: 429s halve the concurrency, successes grow it back, and every call completes', async () => {
    // The server refuses (429) any request that arrives while two others are in flight.
    let server: FakeProvider | undefined;
    const fake = await startFakeProvider({
      latencyMs: 20,
      fault: () => (server!.inFlight() > 2 ? { status: 429 } : undefined),
    });
    server = fake;
    try {
      const m = await stack(fake, { concurrency: 8, max_retries: 10 });
      const pool = m.pools.get('target')!;
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => m.target.complete(ask(`a${i}`))));
      assert.equal(results.length, 40);
      assert.ok(pool.stats.decreases >= 1);
      const lowered = pool.stats.limit;
      assert.ok(lowered < 8);
      for (let i = 0; i < 30; i++) await m.target.complete(ask(`s${i}`));
      assert.ok(pool.stats.limit > lowered, `limit ${pool.stats.limit} after successes, ${lowered} before`);
    } finally {
      await fake.close();
    }
  });

  it('an exhausted rate-limit window in a successful reply pauses the pool until it resets', async () => {
    let n = 0;
    const exhausted: Record<string, string> = {
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '400ms',
    };
    const fake = await startFakeProvider({ respond: () => ({ text: 'ok', headers: n++ === 0 ? exhausted : {} }) });
    try {
      const m = await stack(fake);
      await m.target.complete(ask('1'));
      await m.target.complete(ask('2'));
      assert.ok(fake.requests[1]!.at - fake.requests[0]!.at >= 380);
    } finally {
      await fake.close();
    }
  });
});
