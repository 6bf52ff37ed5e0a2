/**
 * The scheduler against a fake OpenAI-compatible server on 127.0.0.1 with a fixed latency:
 * achieved throughput over the throughput its limit allows (RPM-bound, concurrency-bound, and a
 * server that refuses more than K calls at once, found by AIMD), and CPU time per call, for the
 * scheduler alone and for the whole HTTP path. Prints figures; asserts nothing.
 *
 *   npx tsx bench/scheduler.ts
 */
import '../src/builtins.ts';
import { startFakeServerProcess as server } from './fake-server.ts';
import { CallPool } from '../src/model/call-pool.ts';
import { ScheduledModel } from '../src/model/call-scheduler.ts';
import { buildRoleModels } from '../src/model/stack.ts';
import { ConfigSchema, type Config } from '../src/config/schema.ts';
import type { ChatModel, ChatRequest } from '../src/model/types.ts';

const ask = (i: number): ChatRequest => ({
  purpose: 'rollout',
  messages: [{ role: 'user', content: `question ${i}` }],
});

function config(url: string, role: Record<string, unknown>): Config {
  const r = {
    backend: 'openai_compatible',
    model: 'bench',
    base_url: `${url}/v1`,
    max_retries: 8,
    backoff_s: 0.05,
    backoff_max_s: 1,
    ...role,
  };
  return ConfigSchema.parse({ model: { target: r, optimizer: r, judge: r }, cache: { mode: 'off' } });
}

async function run(url: string, role: Record<string, unknown>, n: number) {
  const models = await buildRoleModels(config(url, role), { environment: {} });
  await models.target.complete(ask(-1)); // warm up: connection and lazy imports
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: n }, (_, i) => models.target.complete(ask(i))));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpuMsPerCall: (cpu.user + cpu.system) / 1000 / n, pool: models.pools.get('target')! };
}

function line(name: string, achieved: number, ideal: number, extra = ''): void {
  console.log(
    `${name.padEnd(46)} ${achieved.toFixed(2).padStart(7)} calls/s  limit ${ideal.toFixed(2).padStart(7)} calls/s  ratio ${(achieved / ideal).toFixed(3)}${extra}`,
  );
}

async function main(): Promise<void> {
  console.log('scheduler benchmark (fake server on 127.0.0.1, in its own process)\n');

  // 1. RPM-bound: 600 rpm = 10 calls/s, 200 ms latency, room for 16 in flight. The best possible
  //    wall time for n calls is (n - 1) / rate + latency.
  {
    const s = await server(200);
    const n = 100;
    const r = await run(s.url, { rpm: 600, concurrency: 16 }, n);
    line('RPM 600, latency 200 ms, 100 calls', (n - 1) / (r.wall - 0.2), 10, `  (wall ${r.wall.toFixed(2)} s)`);
    console.log(`${'  client CPU per call'.padEnd(46)} ${r.cpuMsPerCall.toFixed(3)} ms`);
    await s.stop();
  }

  // 2. A server that enforces 600 rpm itself (sliding minute, 429 beyond): the limiter causes no 429.
  {
    const s = await server(50, 'rpm=600');
    const n = 60;
    const r = await run(s.url, { rpm: 600, concurrency: 32 }, n);
    const seen = await s.stop();
    line('server-enforced RPM 600, 60 calls', (n - 1) / (r.wall - 0.05), 10, `  (429s: ${seen.requests - n - 1})`);
  }

  // 3. Concurrency-bound: 8 in flight, 100 ms latency, no RPM limit.
  {
    const s = await server(100);
    const n = 240;
    const r = await run(s.url, { concurrency: 8 }, n);
    const seen = await s.stop();
    line(
      'concurrency 8, latency 100 ms, 240 calls',
      n / r.wall,
      80,
      `  (max in flight at the server ${seen.maxInFlight})`,
    );
    console.log(`${'  client CPU per call'.padEnd(46)} ${r.cpuMsPerCall.toFixed(3)} ms`);
  }

  // 3b. The same limits with no HTTP: a model that answers after 100 ms, so the pacing alone is measured.
  {
    const sleeper: ChatModel = {
      id: 'sleeper',
      complete: () =>
        new Promise((resolve) =>
          setTimeout(
            () => resolve({ text: 'ok', usage: { input: 1, output: 1, cached: 0, reasoning: 0 }, latencyMs: 100 }),
            100,
          ),
        ),
    };
    const n = 240;
    const model = new ScheduledModel(
      sleeper,
      new CallPool('p', { concurrency: 8, rpm: 0, tpm: 0 }),
      { maxRetries: 0, timeoutMs: 60_000, backoffMs: 1, backoffMaxMs: 1 },
      'model.target',
    );
    const t0 = performance.now();
    await Promise.all(Array.from({ length: n }, (_, i) => model.complete(ask(i))));
    line('  same, no HTTP (scheduler pacing alone)', n / ((performance.now() - t0) / 1000), 80);
  }

  // 4. A server that refuses (429, no retry-after) more than 4 calls at once; the pool may use 32: AIMD finds the level.
  {
    const s = await server(100, 'max-in-flight=4');
    const n = 200;
    const r = await run(s.url, { concurrency: 32 }, n);
    const seen = await s.stop();
    line(
      'server allows 4 at once, pool 32, 200 calls',
      n / r.wall,
      40,
      `  (429s: ${seen.requests - n - 1}, limit now ${r.pool.stats.limit.toFixed(1)})`,
    );
  }

  // 5. The scheduler's own CPU per call: a model that answers at once, no HTTP.
  {
    const instant: ChatModel = {
      id: 'instant',
      complete: async () => ({ text: 'ok', usage: { input: 1, output: 1, cached: 0, reasoning: 0 }, latencyMs: 0 }),
    };
    const model = new ScheduledModel(
      instant,
      new CallPool('p', { concurrency: 64, rpm: 0, tpm: 10_000_000 }),
      { maxRetries: 2, timeoutMs: 60_000, backoffMs: 1, backoffMaxMs: 1 },
      'model.target',
    );
    const n = 50_000;
    for (let i = 0; i < 2000; i++) await model.complete(ask(i));
    const cpu0 = process.cpuUsage();
    await Promise.all(Array.from({ length: n }, (_, i) => model.complete(ask(i))));
    const cpu = process.cpuUsage(cpu0);
    console.log(
      `${'CPU per call, scheduler alone (50,000 calls)'.padEnd(46)} ${((cpu.user + cpu.system) / n).toFixed(1)} µs`,
    );
  }
}

await main();
