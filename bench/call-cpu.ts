/**
 * CPU time per model call over HTTP, the whole path a training run takes: the ledger writing
 * `calls.jsonl` (replies to blobs), the response cache in SQLite, the scheduler, the AI SDK's
 * OpenAI-compatible client, against a fake server in its own process (so its CPU is not counted).
 * Requests are shaped like rollouts: a few-KB system prompt (the skill) and a question. Prints the
 * client's CPU per call (user + system, `process.cpuUsage`) for the full path and with the cache
 * off; asserts nothing.
 *
 *   npx tsx bench/call-cpu.ts [--calls 2000] [--concurrency 32] [--latency-ms 20]
 */
import '../src/builtins.ts';
import { startFakeServerProcess as server } from './fake-server.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigSchema } from '../src/config/schema.ts';
import { buildRoleModels } from '../src/model/stack.ts';
import type { ChatRequest } from '../src/model/types.ts';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '32' },
    'latency-ms': { type: 'string', default: '20' },
  },
});
const N = Number(args.calls);
const CONCURRENCY = Number(args.concurrency);

const SKILL = Array.from(
  { length: 60 },
  (_, i) => `- Rule ${i}: read the question twice, check units and the sign of the answer before replying.`,
).join('\n');
const ask = (i: number): ChatRequest => ({
  purpose: 'rollout',
  system: `You answer questions.\n\n${SKILL}`,
  messages: [
    { role: 'user', content: `Question ${i}: what is ${i} * 7, in words? Give the answer inside <answer></answer>.` },
  ],
});

async function measure(url: string, cacheMode: 'read_write' | 'off', offset: number): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-call-cpu-'));
  const role = { backend: 'openai_compatible', model: 'bench', base_url: `${url}/v1`, concurrency: CONCURRENCY };
  const config = ConfigSchema.parse({
    model: { target: role, optimizer: role, judge: role },
    cache: { mode: cacheMode, path: path.join(dir, 'cache.sqlite') },
  });
  const models = await buildRoleModels(config, { environment: {}, ledgerFile: path.join(dir, 'calls.jsonl') });
  // Warm up: the connection, the SDK's lazy import, the JIT.
  await Promise.all(Array.from({ length: 200 }, (_, i) => models.target.complete(ask(offset - 1000 - i))));
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: N }, (_, i) => models.target.complete(ask(offset + i))));
  const cpu = process.cpuUsage(cpu0);
  models.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return (cpu.user + cpu.system) / 1000 / N;
}

const s = await server(Number(args['latency-ms']));
console.log(
  `CPU per model call over HTTP (node ${process.version}, ${N} calls, ${CONCURRENCY} at once, load ${os.loadavg()[0]!.toFixed(2)})\n`,
);
const full: number[] = [];
const off: number[] = [];
for (let round = 0; round < 3; round++) {
  full.push(await measure(s.url, 'read_write', round * 1_000_000));
  off.push(await measure(s.url, 'off', round * 1_000_000 + 500_000));
}
const best = (xs: number[]) => Math.min(...xs).toFixed(3);
console.log(
  `${'ledger + response cache + scheduler + HTTP'.padEnd(46)} ${best(full)} ms  (rounds: ${full.map((x) => x.toFixed(3)).join(', ')})`,
);
console.log(
  `${'ledger + scheduler + HTTP (cache off)'.padEnd(46)} ${best(off)} ms  (rounds: ${off.map((x) => x.toFixed(3)).join(', ')})`,
);
await s.stop();
