import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/engine/run.ts';
import { SimEnv, SimEnvOptions } from '../../src/envs/sim/env.ts';
import { readJsonLines } from '../../src/run/atomic.ts';
import type { CallRecord } from '../../src/model/ledger.ts';
import { ROOT } from '../helpers/cli.ts';
import { startFakeProvider, type Fault, type FakeProvider } from '../helpers/fake-provider.ts';
import { skillRunResponder } from '../helpers/fake-skillopt-responder.ts';
import { tmpDir } from '../helpers/tmp.ts';

const ENV = { n_train: 16, n_val: 12, n_test: 12 };

const FAULTS: Fault[] = [
  { status: 429, headers: { 'retry-after-ms': '30' } },
  { status: 429 },
  { status: 500 },
  { status: 503 },
  { kind: 'reset' },
  { kind: 'malformed' },
  { kind: 'empty' },
  { kind: 'hang' },
];

/** 20% of distinct requests fail on their first attempt (one in four of those on the second too); the kind cycles. */
function faultPlan(): (r: { body: unknown }) => Fault | undefined {
  const attempts = new Map<string, number>();
  return (r) => {
    const h = createHash('sha256').update(JSON.stringify(r.body)).digest();
    const key = h.toString('hex');
    const n = attempts.get(key) ?? 0;
    attempts.set(key, n + 1);
    const roll = h.readUInt32BE(0) / 2 ** 32;
    if (roll >= 0.2) return undefined;
    const failures = roll < 0.05 ? 2 : 1;
    return n < failures ? FAULTS[h[4]! % FAULTS.length] : undefined;
  };
}

async function trainOver(fake: FakeProvider, dir: string): Promise<{ skill: string; calls: CallRecord[]; history: unknown[] }> {
  const role = { backend: 'openai_compatible', model: 'fake-model', base_url: `${fake.url}/v1`, concurrency: 6, max_retries: 4, backoff_s: 0.01, backoff_max_s: 0.05, timeout_s: 1 };
  const file = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    file,
    stringify({
      model: { backend: 'openai_compatible', target: role, optimizer: role, reasoning_effort: '' },
      train: { num_epochs: 2, batch_size: 8, seed: 3 },
      gradient: { minibatch_size: 4, merge_batch_size: 4, analyst_workers: 4 },
      optimizer: { learning_rate: 2, min_learning_rate: 1, slow_update_samples: 4 },
      evaluation: { eval_test: true },
      env: { name: 'sim', skill_init: path.join(ROOT, 'configs/sim/seed_skill.md'), workers: 6, ...ENV },
      cache: { mode: 'off' },
    }),
  );
  const outRoot = path.join(dir, 'run');
  const loaded = loadConfig(file, { environment: {}, cwd: dir });
  const outcome = await runTraining({ loaded, outRoot, configFile: file, console: false, environment: {} });
  assert.equal(outcome.status, 'finished');
  return {
    skill: fs.readFileSync(path.join(outRoot, 'best_skill.md'), 'utf8'),
    calls: readJsonLines<CallRecord>(path.join(outRoot, 'calls.jsonl')),
    history: JSON.parse(fs.readFileSync(path.join(outRoot, 'history.json'), 'utf8')) as unknown[],
  };
}

describe('a whole training run over HTTP', () => {
  it('ends with the same skill when 20% of calls fail: faults cost retries, never results', async () => {
    const splits = await new SimEnv(SimEnvOptions.parse(ENV)).load();
    const items = [...splits.train, ...splits.val, ...splits.test];

    const clean = await startFakeProvider({ respond: skillRunResponder(items) });
    const faulty = await startFakeProvider({ respond: skillRunResponder(items), fault: faultPlan() });
    try {
      const a = await trainOver(clean, tmpDir());
      const b = await trainOver(faulty, tmpDir());

      // The run learned something, so that sameness means something.
      assert.notEqual(a.skill, fs.readFileSync(path.join(ROOT, 'configs/sim/seed_skill.md'), 'utf8'));
      assert.equal(b.skill, a.skill);
      const strip = (h: unknown[]) => JSON.stringify(h.map((r) => ({ ...(r as object), timing: undefined, wall_time_s: undefined, tokens: undefined })));
      assert.equal(strip(b.history), strip(a.history));

      // Faults really happened, were retried, and none reached the results.
      const injected = faulty.requests.length - b.calls.length;
      assert.ok(injected / faulty.requests.length >= 0.15, `${injected} of ${faulty.requests.length} requests faulted`);
      assert.ok(b.calls.some((c) => c.retries > 0));
      assert.equal(b.calls.filter((c) => c.error).length, 0);
      assert.equal(a.calls.filter((c) => c.retries > 0).length, 0);
      assert.equal(b.calls.length, a.calls.length);
      // Both kinds of call went over HTTP.
      assert.ok(b.calls.some((c) => c.role === 'target') && b.calls.some((c) => c.role === 'optimizer'));
    } finally {
      await clean.close();
      await faulty.close();
    }
  });
});
