/**
 * Batch pricing bench: what a training run's final evaluation is billed with `model.target.batch`
 * and without it, the same run otherwise, through the whole trainer over real HTTP against the
 * fake OpenAI server on 127.0.0.1 (`test/helpers/fake-batches.ts`: the Files and Batches
 * endpoints in their real shapes; a batch here takes 2 s, a real one minutes to hours). The
 * world is the simulator's, answered by the scripted responder of the tests; the test scores and
 * the final skill must be the same both ways.
 *
 *   npm run bench:batch [-- --test 200]
 */
import { ownSeals } from './isolated-cache.ts';
import '../src/builtins.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { runTraining } from '../src/app/train.ts';
import { loadConfig } from '../src/config/load.ts';
import { SimEnv, SimEnvOptions } from '../src/envs/sim/env.ts';
import type { CallRecord } from '../src/model/ledger.ts';
import { readJsonLines } from '../src/run/atomic.ts';
import { startFakeProvider } from '../test/helpers/fake-provider.ts';
import { skillRunResponder } from '../test/helpers/fake-skillopt-responder.ts';

const { values: args } = parseArgs({ options: { test: { type: 'string', default: '200' } } });
const ENV = { n_train: 16, n_val: 12, n_test: Number(args.test) };
const KEYS = { OPENAI_API_KEY: 'sk-bench' };
const splits = await new SimEnv(SimEnvOptions.parse(ENV)).load();
const fake = await startFakeProvider({
  respond: skillRunResponder([...splits.train, ...splits.val, ...splits.test]),
  batches: { takesMs: 2000 },
});

async function train(batch: boolean) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-batch-'));
  const role = {
    backend: 'openai_chat',
    model: 'gpt-4o-mini',
    base_url: `${fake.url}/v1`,
    options: { provider: 'openai' },
    concurrency: 8,
    batch_poll_s: 0.5,
  };
  const file = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    file,
    stringify({
      model: { backend: 'openai_chat', target: { ...role, batch }, optimizer: role, reasoning_effort: '' },
      train: { num_epochs: 1, batch_size: 8, seed: 3 },
      gradient: { minibatch_size: 4, merge_batch_size: 4 },
      evaluation: { eval_test: true },
      env: {
        name: 'sim',
        skill_init: path.resolve(import.meta.dirname, '../configs/sim/seed_skill.md'),
        workers: 8,
        ...ENV,
      },
      cache: { mode: 'off' },
    }),
  );
  const out = path.join(dir, 'run');
  const loaded = loadConfig(file, { overrides: [ownSeals(out)], environment: KEYS, cwd: dir });
  await runTraining({ loaded, outRoot: out, configFile: file, console: false, environment: KEYS });
  const calls = readJsonLines<CallRecord>(path.join(out, 'calls.jsonl'));
  const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
  const events = readJsonLines<{ type: string; stage?: string; seconds?: number }>(path.join(out, 'events.jsonl'));
  fs.rmSync(dir, { recursive: true, force: true });
  const final = calls.filter((c) => c.work === 'final evaluation');
  const usd = (cs: CallRecord[]) => cs.reduce((s, c) => s + (c.cost_usd ?? 0), 0);
  return {
    final: usd(final),
    run: usd(calls),
    calls: final.length,
    batched: final.filter((c) => c.batch).length,
    seconds: events.find((e) => e.type === 'stage_finished' && e.stage === 'final_evaluation')?.seconds ?? 0,
    tests: JSON.stringify(summary.test_results),
  };
}

try {
  const live = await train(false);
  const batched = await train(true);
  if (live.tests !== batched.tests) throw new Error('the test results differ with batch pricing');
  const ratio = batched.final / live.final;
  console.log(
    `Batch pricing: a training run's final evaluation (initial, best and final skill on ${ENV.n_test} test items), OpenAI Batch API fake, a batch taking 2 s.\n`,
  );
  console.log('| | live | batch | ratio | goal |');
  console.log('| --- | --- | --- | --- | --- |');
  console.log(
    `| final evaluation, billed | $${live.final.toFixed(4)} | $${batched.final.toFixed(4)} | ${ratio.toFixed(2)}x | ≤ 0.55x |`,
  );
  console.log(
    `| whole run, billed | $${live.run.toFixed(4)} | $${batched.run.toFixed(4)} | ${(batched.run / live.run).toFixed(2)}x | |`,
  );
  console.log(`| final evaluation, calls (as batches) | ${live.calls} | ${batched.calls} (${batched.batched}) | | |`);
  console.log(`| final evaluation, wall | ${live.seconds.toFixed(1)} s | ${batched.seconds.toFixed(1)} s | | |`);
  console.log(`\nTest results the same both ways. Goal ${ratio <= 0.55 ? 'met' : 'NOT met'}.`);
} finally {
  await fake.close();
}
