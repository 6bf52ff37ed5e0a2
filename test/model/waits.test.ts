/**
 * Waits that say what they do: a long wait is shown with the role, the reason and its end; a
 * provider asking for more than the role's `max_wait_s` stops the run (resumably) instead of
 * stalling it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildRoleModels, type ModelEvent, type RoleModels } from '../../src/model/stack.ts';
import { RunStop, type ChatRequest } from '../../src/model/types.ts';
import { formatEvent } from '../../src/run/reporter.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';

const ask = (text: string, signal?: AbortSignal): ChatRequest => ({
  purpose: 'rollout',
  messages: [{ role: 'user', content: text }],
  ...(signal ? { signal } : {}),
});

async function stack(
  fake: FakeProvider,
  target: Record<string, unknown> = {},
): Promise<{ m: RoleModels; events: ModelEvent[]; next: (type: ModelEvent['type']) => Promise<ModelEvent> }> {
  const role = {
    backend: 'openai_compatible',
    model: 'fake-model',
    base_url: `${fake.url}/v1`,
    max_retries: 3,
    backoff_s: 0.01,
    backoff_max_s: 0.05,
    ...target,
  };
  const { config } = configWith({ model: { target: role, optimizer: role }, cache: { mode: 'off' } });
  const events: ModelEvent[] = [];
  let waiting: { type: ModelEvent['type']; resolve: (e: ModelEvent) => void } | undefined;
  const m = await buildRoleModels(config, {
    environment: {},
    onEvent: (e) => {
      events.push(e);
      if (waiting?.type === e.type) waiting.resolve(e);
    },
  });
  const next = (type: ModelEvent['type']) => new Promise<ModelEvent>((resolve) => (waiting = { type, resolve }));
  return { m, events, next };
}

describe('waits', () => {
  it('a wait of more than a few seconds is shown at once: role, reason, and until when', {
    timeout: 20_000,
  }, async () => {
    const fake = await startFakeProvider();
    try {
      const { m, next } = await stack(fake);
      fake.faults.push({ status: 429, headers: { 'retry-after': '6' } });
      const asked = Date.now();
      const stop = new AbortController();
      const call = m.target.complete(ask('wait', stop.signal));
      const event = await next('model_wait');
      stop.abort();
      await assert.rejects(call);
      assert.equal(event.type, 'model_wait');
      const wait = event as Extract<ModelEvent, { type: 'model_wait' }>;
      assert.deepEqual([wait.role, wait.model, wait.seconds], ['target', 'openai_compatible:fake-model', 6]);
      assert.match(wait.reason, /rate limited \(HTTP 429\); the provider asked to wait/);
      const until = Date.parse(wait.until);
      assert.ok(until >= asked + 6000, `until ${wait.until}`);
      assert.match(
        formatEvent({ time: '', ...wait })!,
        /^ {2}\[model\.target openai_compatible:fake-model\] waiting 6 s, until \d\d:\d\d:\d\d UTC: rate limited/,
      );
      m.close();
    } finally {
      await fake.close();
    }
  });

  it('a used-up rate-limit window in a reply pauses the role, and says so', async () => {
    const fake = await startFakeProvider({
      respond: () => ({
        text: 'ok',
        headers: { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '20s' },
      }),
    });
    try {
      const { m, events } = await stack(fake);
      await m.target.complete(ask('window'));
      const wait = events.find((e) => e.type === 'model_wait') as
        | Extract<ModelEvent, { type: 'model_wait' }>
        | undefined;
      assert.ok(wait, 'a wait event');
      assert.equal(wait.seconds, 20);
      assert.match(wait.reason, /rate-limit window is used up/);
      m.close();
    } finally {
      await fake.close();
    }
  });

  it('a provider asking for longer than max_wait_s stops the run: the call does not wait, later calls are refused unsent', {
    timeout: 20_000,
  }, async () => {
    const fake = await startFakeProvider();
    try {
      const { m } = await stack(fake);
      fake.faults.push({ status: 429, headers: { 'retry-after': '3600' } });
      await assert.rejects(
        m.target.complete(ask('an hour')),
        (e) =>
          e instanceof RunStop &&
          e.reason === 'wait' &&
          /^model\.target \(openai_compatible:fake-model\): the provider asked to wait 60 min before the next call \(.*HTTP 429.*\), more than model\.target\.max_wait_s=300\. The run is saved: run the same command again later to resume, or raise model\.target\.max_wait_s/.test(
            e.message,
          ),
      );
      const sent = fake.requests.length;
      await assert.rejects(m.optimizer.complete(ask('after the stop')), (e) => e instanceof RunStop);
      assert.equal(fake.requests.length, sent, 'nothing sent after the stop');
      assert.equal(m.ledger.all().length, 0, 'a stopped call is made again on resume: nothing is recorded of it');
      m.close();
    } finally {
      await fake.close();
    }
  });

  it('max_wait_s caps the waits of one call in all', async () => {
    const fake = await startFakeProvider();
    try {
      const { m } = await stack(fake, { max_wait_s: 0.5, max_retries: 5 });
      for (let i = 0; i < 3; i++) fake.faults.push({ status: 429, headers: { 'retry-after-ms': '300' } });
      await assert.rejects(
        m.target.complete(ask('again and again')),
        (e) => e instanceof RunStop && /asked to wait 0 s more, after 0 s already, .*max_wait_s=0\.5/.test(e.message),
      );
      assert.equal(fake.requests.length, 2, 'the second wait would go over the cap');
      m.close();
    } finally {
      await fake.close();
    }
  });
});
