import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/app/train.ts';
import { SimModel } from '../../src/model/sim/backend.ts';
import { CallFailure } from '../../src/model/failure.ts';
import { FatalModelError, InfraError, type ChatModel, type ChatRequest } from '../../src/model/types.ts';
import { unitHash } from '../../src/util/random.ts';
import { SIM_CONFIG, readText } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

const sim = () => new SimModel('sim-1', 42, 0, { harmful: 0.3, irrelevant: 0.35, vague: 0.15, blame: 0.35 });

function train(target: ChatModel | undefined, overrides: string[] = [], optimizer?: ChatModel) {
  const out = path.join(tmpDir(), 'run');
  const loaded = loadConfig(SIM_CONFIG, { overrides, environment: {} });
  const models = { ...(target ? { target } : {}), ...(optimizer ? { optimizer } : {}) };
  return { out, run: runTraining({ loaded, outRoot: out, configFile: SIM_CONFIG, console: false, models }) };
}

describe('model failures', () => {
  it('a fatal model error stops the run at once with its message', async () => {
    let calls = 0;
    const target: ChatModel = {
      id: 'broken:x',
      async complete() {
        calls++;
        throw new FatalModelError('the target rejected the key: set OPENAI_API_KEY to a valid key');
      },
    };
    const { out, run } = train(target);
    await assert.rejects(run, /set OPENAI_API_KEY/);
    assert.ok(calls <= 16, `stopped after ${calls} calls, not forty steps of zeros`);
    assert.ok(!fs.existsSync(out), 'nothing was paid for: the new run directory is gone');
  });

  /** A target whose calls fail for some items always, and for others on the first attempt only. */
  function flaky(always: number, once: number): ChatModel {
    const inner = sim();
    const tried = new Set<string>();
    return {
      id: inner.id,
      complete(req: ChatRequest) {
        const id = (req.meta as { task: { id: string } }).task.id;
        const u = unitHash('flaky', id);
        const first = !tried.has(id);
        tried.add(id);
        if (u < always || (u < always + once && first))
          return Promise.reject(new InfraError('503 after 5 retries', 'server', 5));
        return inner.complete(req);
      },
    };
  }

  it('infrastructure errors are retried once on selection, recorded on the trajectory and kept out of scores', async () => {
    const { out, run } = train(flaky(0.05, 0.25), ['train.num_epochs=1']);
    const outcome = await run;
    assert.equal(outcome.status, 'finished');
    const lines = readText(path.join(out, 'selection_eval_baseline/results.jsonl'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const errors = lines.filter((l) => l.error);
    assert.ok(errors.length > 0 && errors.length <= 3, `${errors.length} errors left after the retry`);
    assert.ok(
      errors.every((l) => l.error.kind === 'server' && unitHash('flaky', l.id) < 0.05),
      'only the permanent failures remain',
    );
    const scored = lines.filter((l) => !l.error);
    const baseline = JSON.parse(readText(path.join(out, 'runtime_state.json'))).baseline_score;
    assert.equal(
      baseline,
      scored.reduce((s, l) => s + l.hard, 0) / scored.length,
      'errors are not counted as failures',
    );
    const history = JSON.parse(readText(path.join(out, 'history.json')));
    assert.ok(
      history.some((h: { rollout_errors: number }) => h.rollout_errors > 0),
      'training rollouts record their errors',
    );
  });

  it('a selection evaluation with too many errors stops the run instead of trusting a partial score', async () => {
    const { run } = train(flaky(0.3, 0));
    await assert.rejects(
      run,
      /the selection evaluation failed on \d+ of 30 items \(server: 503 after 5 retries\); a score over the rest would not be trustworthy/,
    );
  });

  it('a target failing on every item stops the run with a clear message', async () => {
    const target: ChatModel = {
      id: 'down:x',
      complete: () => Promise.reject(new InfraError('connection refused', 'network', 5)),
    };
    const { run } = train(target);
    await assert.rejects(
      run,
      /the selection evaluation failed on 30 of 30 items \(network: connection refused\).*Check the target model/,
    );
  });

  it('an optimizer that is down stops the run at the first step, resumably, instead of skipping every step', async () => {
    const optimizer: ChatModel = {
      id: 'down:opt',
      complete: () => Promise.reject(new InfraError('503 after 5 retries', 'server', 5)),
    };
    const { out, run } = train(undefined, [], optimizer);
    await assert.rejects(
      run,
      /every optimizer call of step 1 failed \(\d+ analyst calls; see the warnings above\)\. Check the optimizer model/,
    );
    const runtime = JSON.parse(readText(path.join(out, 'runtime_state.json')));
    assert.equal(runtime.last_completed_step, 0);
    assert.equal(runtime.status, 'failed');
  });

  it('a fatal error in one analyst call ends the run cleanly (no unhandled rejection)', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const inner = sim();
      let n = 0;
      let open = 0;
      let settledAll: () => void = () => {};
      const allSettled = new Promise<void>((resolve) => (settledAll = resolve));
      let failed = false;
      const optimizer: ChatModel = {
        id: inner.id,
        async complete(req: ChatRequest) {
          open++;
          try {
            if (req.purpose === 'analyst' && ++n === 2)
              throw new FatalModelError('the optimizer key was rejected (401)');
            return await inner.complete(req);
          } finally {
            if (--open === 0 && failed) settledAll();
          }
        },
      };
      const { run } = train(undefined, [], optimizer);
      await assert.rejects(run, /optimizer key was rejected/);
      failed = true;
      // Every optimizer call the step had started has settled; then the rejections they left are looked at.
      if (open === 0) settledAll();
      await allSettled;
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a bug of ours in a stage (a TypeError in a merge call) stops the run with its stack in the event log, resumably', async () => {
    const inner = sim();
    let merges = 0;
    const buggy: ChatModel = {
      id: inner.id,
      complete(req: ChatRequest) {
        if (req.purpose === 'merge' && ++merges === 1) {
          const reply = undefined as unknown as { items: unknown[] };
          return Promise.resolve({ ...reply.items }) as never;
        }
        return inner.complete(req);
      },
    };
    const { out, run } = train(undefined, ['train.num_epochs=1'], buggy);
    await assert.rejects(run, (e) => e instanceof TypeError && /reading 'items'/.test(e.message));
    const events = readText(path.join(out, 'events.jsonl'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const failed = events.at(-1);
    assert.equal(failed.type, 'run_failed');
    assert.match(
      failed.stack,
      /TypeError: Cannot read properties of undefined \(reading 'items'\)\n\s+at .*failures\.test\.ts/,
    );
    assert.ok(
      !events.some((e) => e.type === 'log' && /merge call gave no usable reply/.test(e.message)),
      'not turned into a warning',
    );
    const runtime = JSON.parse(readText(path.join(out, 'runtime_state.json')));
    assert.deepEqual([runtime.status, runtime.last_completed_step], ['failed', 0]);
    // Fixed, the same command resumes and finishes.
    const loaded = loadConfig(SIM_CONFIG, { overrides: ['train.num_epochs=1'], environment: {} });
    const outcome = await runTraining({
      loaded,
      outRoot: out,
      configFile: SIM_CONFIG,
      console: false,
      models: { optimizer: sim() },
    });
    assert.equal(outcome.status, 'finished');
    assert.ok(merges >= 1);
  });

  it('a bug of ours in a rollout (a TypeError in the env) stops the run with its stack, resumably, instead of becoming an item error', async () => {
    const inner = sim();
    let broken = 0;
    // Our code on the call path fails on some items, as a bug would.
    const target: ChatModel = {
      id: inner.id,
      async complete(req: ChatRequest) {
        const id = (req.meta as { task: { id: string } }).task.id;
        if (unitHash('bug', id) < 0.1) {
          broken++;
          const settings = undefined as unknown as { temperature: number };
          return { ...(await inner.complete(req)), text: String(settings.temperature) };
        }
        return inner.complete(req);
      },
    };
    const { out, run } = train(target, ['train.num_epochs=1']);
    await assert.rejects(run, (e) => e instanceof TypeError && /reading 'temperature'/.test(e.message));
    assert.ok(broken > 0);
    const events = readText(path.join(out, 'events.jsonl'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const failed = events.at(-1);
    assert.equal(failed.type, 'run_failed');
    assert.match(
      failed.stack,
      /TypeError: Cannot read properties of undefined \(reading 'temperature'\)\n\s+at .*failures\.test\.ts/,
    );
    const results = path.join(out, 'selection_eval_baseline/results.jsonl');
    assert.ok(!fs.existsSync(results) || !/"kind":"env"/.test(readText(results)), 'no item error recorded for the bug');
    // Fixed, the same command resumes and finishes.
    const loaded = loadConfig(SIM_CONFIG, { overrides: ['train.num_epochs=1'], environment: {} });
    const outcome = await runTraining({
      loaded,
      outRoot: out,
      configFile: SIM_CONFIG,
      console: false,
      models: { target: sim() },
    });
    assert.equal(outcome.status, 'finished');
  });

  it('a provider asking to wait longer than max_wait_s stops the run resumably; resumed, it ends as an uninterrupted run', {
    timeout: 60_000,
  }, async () => {
    const reference = train(undefined, ['train.num_epochs=1']);
    assert.equal((await reference.run).status, 'finished');
    const inner = sim();
    let n = 0;
    // The 40th call meets a 429 asking for an hour (as a provider's CallFailure would reach the scheduler).
    const throttled: ChatModel = {
      id: inner.id,
      priced: true,
      complete(req: ChatRequest) {
        if (++n === 40)
          return Promise.reject(
            new CallFailure('sim:sim-1: HTTP 429: rate limit reached for requests', 'rate_limit', 429, 3_600_000),
          );
        return inner.complete(req);
      },
    };
    const { out, run } = train(throttled, ['train.num_epochs=1']);
    const outcome = await run;
    assert.equal(outcome.status, 'stopped');
    assert.match(
      (outcome as { reason: string }).reason,
      /model\.target \(sim:sim-1\): the provider asked to wait 60 min .*max_wait_s=300/,
    );
    const events = readText(path.join(out, 'events.jsonl'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual([events.at(-1).type, events.at(-1).reason], ['run_stopped', 'wait']);
    const loaded = loadConfig(SIM_CONFIG, { overrides: ['train.num_epochs=1'], environment: {} });
    const resumed = await runTraining({
      loaded,
      outRoot: out,
      configFile: SIM_CONFIG,
      console: false,
      models: { target: sim() },
    });
    assert.equal(resumed.status, 'finished');
    assert.equal(readText(path.join(out, 'best_skill.md')), readText(path.join(reference.out, 'best_skill.md')));
    const scores = (dir: string) =>
      (JSON.parse(readText(path.join(dir, 'history.json'))) as { current_score: number }[]).map((h) => h.current_score);
    assert.deepEqual(scores(out), scores(reference.out));
  });
});
