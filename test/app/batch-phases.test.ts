import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/app/train.ts';
import { runEvaluation, transferRole } from '../../src/app/eval/evaluate.ts';
import { formatPlan, planRun } from '../../src/app/plan.ts';
import { planInputFor } from '../../src/app/plan-input.ts';
import { SimEnv, SimEnvOptions } from '../../src/envs/sim/env.ts';
import { readJsonLines } from '../../src/run/atomic.ts';
import type { CallRecord } from '../../src/model/ledger.ts';
import { costOf, priceOf } from '../../src/model/prices.ts';
import { ModelConfigError } from '../../src/model/types.ts';
import { UserError } from '../../src/errors.ts';
import { ROOT } from '../helpers/cli.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { skillRunResponder } from '../helpers/fake-skillopt-responder.ts';
import { tmpDir } from '../helpers/tmp.ts';

const ENV = { n_train: 8, n_val: 6, n_test: 10 };
const KEYS = { OPENAI_API_KEY: 'sk-batch-phases-key' };
const MODEL = 'gpt-4o-mini';

function writeConfig(
  fake: FakeProvider,
  dir: string,
  target: Record<string, unknown> = {},
  extra: object = {},
): string {
  const role = {
    backend: 'openai_chat',
    model: MODEL,
    base_url: `${fake.url}/v1`,
    options: { provider: 'openai' },
    concurrency: 6,
    max_retries: 1,
    backoff_s: 0,
    batch_poll_s: 0.05,
  };
  const file = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    file,
    stringify({
      model: { backend: 'openai_chat', target: { ...role, ...target }, optimizer: role, reasoning_effort: '' },
      train: { num_epochs: 1, batch_size: 8, seed: 3 },
      gradient: { minibatch_size: 4, merge_batch_size: 4, analyst_workers: 4 },
      optimizer: { learning_rate: 2, min_learning_rate: 1 },
      // The same skills are scored live and as batches: each measurement scores the test split.
      evaluation: { eval_test: true, audit: { rescore_test: true } },
      env: { name: 'sim', skill_init: path.join(ROOT, 'configs/sim/seed_skill.md'), workers: 4, ...ENV },
      cache: { mode: 'off' },
      ...extra,
    }),
  );
  return file;
}

async function trainWith(fake: FakeProvider, target: Record<string, unknown> = {}) {
  const dir = tmpDir();
  const file = writeConfig(fake, dir, target);
  const outRoot = path.join(dir, 'run');
  const loaded = loadConfig(file, { environment: KEYS, cwd: dir });
  const batchesBefore = fake.batches.batches.size;
  const outcome = await runTraining({ loaded, outRoot, configFile: file, console: false, environment: KEYS });
  const summary = JSON.parse(fs.readFileSync(path.join(outRoot, 'summary.json'), 'utf8'));
  return {
    outcome,
    summary,
    calls: readJsonLines<CallRecord>(path.join(outRoot, 'calls.jsonl')),
    best: fs.readFileSync(path.join(outRoot, 'best_skill.md'), 'utf8'),
    batches: [...fake.batches.batches.values()].slice(batchesBefore),
    outRoot,
  };
}

const price = priceOf(MODEL)!;
const liveCost = (c: CallRecord) => costOf(c.usage, price)!;

describe('batch pricing in the phases that can wait', () => {
  let fake: FakeProvider;
  let testItems: string[];
  before(async () => {
    const splits = await new SimEnv(SimEnvOptions.parse(ENV)).load();
    testItems = splits.test.map((i) => String(i.question));
    fake = await startFakeProvider({
      respond: skillRunResponder([...splits.train, ...splits.val, ...splits.test]),
      batches: { takesMs: 100 },
    });
  });
  after(() => fake.close());

  it('sends the final evaluation on test as batches at half price, with the same results as live', async () => {
    const live = await trainWith(fake);
    const batched = await trainWith(fake, { batch: true });
    assert.equal(batched.outcome.status, 'finished');
    // Same decisions, same skill, same test scores: only the way the calls went differs.
    assert.equal(batched.best, live.best);
    assert.deepEqual(batched.summary.test_results, live.summary.test_results);
    assert.equal(live.batches.length, 0);

    // Every target call of the test phase, and only those, went as a batch.
    const sent = batched.batches.flatMap((b) => b.items.map((i) => i.body.messages.at(-1).content as string));
    assert.ok(sent.length >= testItems.length, `${sent.length} batched requests`);
    assert.ok(
      sent.every((q) => testItems.includes(q)),
      'only test items were batched',
    );
    // One batch a skill scored on test at most (initial, best, final), not one per call.
    assert.ok(batched.batches.length <= 3, `${batched.batches.length} batches`);
    const inBatch = batched.calls.filter((c) => c.batch);
    assert.equal(inBatch.length, sent.length);
    assert.ok(inBatch.every((c) => c.role === 'target'));
    for (const c of inBatch)
      assert.ok(Math.abs(c.cost_usd! - liveCost(c) / 2) < 1e-12, 'billed at half the live price');
    for (const c of batched.calls.filter((c) => !c.batch))
      assert.ok(Math.abs(c.cost_usd! - liveCost(c)) < 1e-12, 'other calls at the live price');
    // The baseline stays live without batch_baseline.
    const baseline = readJsonLines<{ id: string }>(
      path.join(batched.outRoot, 'selection_eval_baseline', 'results.jsonl'),
    );
    assert.ok(baseline.length > 0);

    // What the batches saved is all the run saved: half of what those calls cost live.
    const total = (calls: CallRecord[]) => calls.reduce((a, c) => a + (c.cost_usd ?? 0), 0);
    const saved = inBatch.reduce((a, c) => a + liveCost(c) / 2, 0);
    assert.ok(saved > 0 && Math.abs(total(live.calls) - total(batched.calls) - saved) < 1e-9);
  });

  it('with batch_baseline, the baseline goes as a batch too', async () => {
    const run = await trainWith(fake, { batch: true, batch_baseline: true });
    assert.equal(run.outcome.status, 'finished');
    const sent = new Set(run.batches.flatMap((b) => b.items.map((i) => i.body.messages.at(-1).content as string)));
    const splits = await new SimEnv(SimEnvOptions.parse(ENV)).load();
    assert.ok(
      splits.val.some((i) => sent.has(String(i.question))),
      'selection items of the baseline were batched',
    );
  });

  it('eval sends every cell and repeat in one batch, and reports no batch wait as latency', async () => {
    const dir = tmpDir();
    const file = writeConfig(fake, dir, { batch: true });
    const loaded = loadConfig(file, { environment: KEYS, cwd: dir });
    const before = fake.batches.batches.size;
    const other = path.join(dir, 'other.md');
    fs.writeFileSync(
      other,
      `${fs.readFileSync(path.join(ROOT, 'configs/sim/seed_skill.md'), 'utf8')}\n- Answer briefly.\n`,
    );
    const summary = await runEvaluation({
      loaded,
      outRoot: path.join(dir, 'eval'),
      configFile: file,
      skillFiles: [path.join(ROOT, 'configs/sim/seed_skill.md'), other],
      split: 'test',
      repeats: 2,
      environment: KEYS,
      out: null,
    });
    const made = [...fake.batches.batches.values()].slice(before);
    assert.equal(made.length, 1, 'one batch');
    assert.equal(made[0]!.items.length, 2 * 2 * ENV.n_test);
    assert.equal(summary.cells.length, 2);
    for (const cell of summary.cells) {
      assert.equal(cell.n_items, ENV.n_test);
      assert.equal(cell.per_task?.latency_ms, undefined, 'a batch wait is not a task latency');
    }
  });

  it('refuses batch where it cannot apply, before any call', async () => {
    const dir = tmpDir();
    const asked = fake.requests.length;
    const refused = async (
      target: Record<string, unknown>,
      extra: object,
      pattern: RegExp,
      kind: new (...args: never[]) => Error,
    ) => {
      const file = writeConfig(fake, dir, target, extra);
      const loaded = loadConfig(file, { environment: KEYS, cwd: dir });
      await assert.rejects(
        runTraining({ loaded, outRoot: path.join(dir, 'run'), configFile: file, console: false, environment: KEYS }),
        (e) => e instanceof kind && pattern.test((e as Error).message),
      );
    };
    await refused(
      { batch: true },
      { run: { queue: 'redis://127.0.0.1:1' } },
      /model\.target\.batch and run\.queue/,
      UserError,
    );
    await refused({ batch_baseline: true }, {}, /batch_baseline .*needs model\.target\.batch: true/, ModelConfigError);
    await refused(
      { backend: 'sim', model: 'sim', options: {}, base_url: '', batch: true },
      {},
      /model\.target\.batch: sim .*has no batch API/,
      ModelConfigError,
    );
    assert.equal(fake.requests.length, asked, 'no call made');
  });

  it('the dry run prices the batched phases at the discount and says so', async () => {
    const dir = tmpDir();
    const planOf = async (target: Record<string, unknown>) =>
      planRun(await planInputFor(loadConfig(writeConfig(fake, dir, target), { environment: KEYS, cwd: dir })));
    const live = await planOf({});
    const batched = await planOf({ batch: true, batch_baseline: true });
    for (const stage of live.stages) {
      const other = batched.stages.find((s) => s.stage === stage.stage)!;
      const factor = stage.stage === 'test' || stage.stage === 'baseline' ? 0.5 : 1;
      assert.ok(Math.abs(other.costUsd! - stage.costUsd! * factor) < 1e-12, stage.stage);
      assert.equal(other.batch, factor === 0.5 ? true : undefined);
    }
    assert.match(formatPlan(batched), /test \(batch\)/);
  });

  it('a --target on another backend leaves the batch setting behind, unless it sets it itself', () => {
    const base = {
      ...loadConfig(writeConfig(fake, tmpDir(), { batch: true }), { environment: KEYS }).config.model.target,
    };
    assert.equal(transferRole('openai_chat:gpt-4o', base).batch, true);
    assert.equal(transferRole('anthropic:claude-sonnet-4-5', base).batch, false);
    assert.equal(transferRole({ backend: 'anthropic', model: 'claude-sonnet-4-5', batch: true }, base).batch, true);
  });
});
