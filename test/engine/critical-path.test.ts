/**
 * What a step waits on: its rollouts start in the order reflection consumes them, so the first
 * analyst call leaves after the first minibatch's rollouts rather than near the end of the batch;
 * when its patches fit in one merge group, one optimizer call merges and ranks them.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { runTraining } from '../../src/app/train.ts';
import { loadConfig } from '../../src/config/load.ts';
import { SimModel } from '../../src/model/sim/backend.ts';
import type { ChatModel, ChatRequest } from '../../src/model/types.ts';
import type { HistoryRecord } from '../../src/run/records.ts';
import { readEvents } from '../../src/run/events.ts';
import { historyOf, readText, SIM_CONFIG, trainSim } from '../helpers/train.ts';
import { readJsonLines } from '../../src/run/atomic.ts';
import type { CallRecord } from '../../src/model/ledger.ts';
import { tmpDir } from '../helpers/tmp.ts';
import pLimit from 'p-limit';
import { ConfigSchema } from '../../src/config/schema.ts';
import { preflight } from '../../src/config/preflight.ts';
import { trainSettings } from '../../src/engine/settings.ts';
import { pinnedRuntimeState } from '../fixtures/pinned-sim/cases.ts';
import { SimEnv } from '../../src/envs/sim/env.ts';
import { ScoreCache } from '../../src/engine/scoring/score-cache.ts';
import { Rollouts } from '../../src/engine/stages/rollout.ts';

const sim = () => new SimModel('sim-1', 42, 0, { harmful: 0.3, irrelevant: 0.35, vague: 0.15, blame: 0.35 });

/** Sim models that write, in the order calls arrive, 'rollout' for each target call and the purpose of each optimizer call. */
function loggedModels(log: string[], target: (req: ChatRequest) => Promise<string> | undefined = () => undefined) {
  const t = sim();
  const o = sim();
  const targetModel: ChatModel = {
    id: t.id,
    async complete(req) {
      log.push('rollout');
      // A few milliseconds per rollout, so each one finishes on its own turn of the event loop.
      await sleep(3);
      const text = target(req);
      return text === undefined
        ? t.complete(req)
        : {
            text: await text,
            usage: { input: 1, output: 1, cached: 0, reasoning: 0 },
            latencyMs: 0,
            from: 'provider',
            costUsd: 0,
          };
    },
  };
  const optimizer: ChatModel = {
    id: o.id,
    complete(req) {
      log.push(req.purpose);
      return o.complete(req);
    },
  };
  return { target: targetModel, optimizer };
}

async function train(overrides: string[], models: { target: ChatModel; optimizer: ChatModel }) {
  const out = path.join(tmpDir(), 'run');
  const loaded = loadConfig(SIM_CONFIG, { overrides, environment: {} });
  const outcome = await runTraining({ loaded, outRoot: out, configFile: SIM_CONFIG, console: false, models });
  assert.equal(outcome.status, 'finished');
  return out;
}

describe('the critical path of a step', () => {
  it('starts the training rollouts in the order reflection consumes them: the first analyst call leaves after one minibatch', async () => {
    const log: string[] = [];
    // Every answer is wrong, so every trajectory is a failure and the first minibatch is the first five of the order.
    const models = loggedModels(log, () => Promise.resolve('<answer>no idea</answer>'));
    const nVal = 10;
    await train(
      [
        'train.num_epochs=1',
        'env.n_train=20',
        `env.n_val=${nVal}`,
        'env.workers=1',
        'model.target.concurrency=1',
        'gradient.minibatch_size=5',
      ],
      models,
    );
    const firstAnalyst = log.indexOf('analyst');
    assert.ok(firstAnalyst > 0, 'an analyst was called');
    const trainingRollouts = log.slice(0, firstAnalyst).filter((e) => e === 'rollout').length - nVal;
    // One worker: the fifth rollout fills the minibatch; the sixth may have started meanwhile.
    assert.ok(
      trainingRollouts <= 6,
      `${trainingRollouts} of the batch's 20 rollouts were started before the first analyst call`,
    );
  });

  it("reports each step's wall time to the millisecond, not to a tenth of a second", async () => {
    const { out } = await trainSim(['train.num_epochs=1']);
    const seconds = readEvents(path.join(out, 'events.jsonl')).flatMap((e) =>
      e.type === 'step_finished' ? [e.seconds] : [],
    );
    assert.equal(seconds.length, 3);
    assert.ok(
      seconds.some((x) => Math.abs(x * 10 - Math.round(x * 10)) > 1e-6),
      `step times ${seconds.join(', ')} are all whole tenths of a second`,
    );
  });

  it('merges and ranks in one call when the patches fit in one merge group (the staged strategy needs two)', async () => {
    const after = (h: HistoryRecord) => (h.tokens?.merge?.calls ?? 0) + (h.tokens?.ranking?.calls ?? 0);
    const fits = (h: HistoryRecord) => (h.n_failure_patches ?? 0) + (h.n_success_patches ?? 0) <= 4;
    const combined = await trainSim(['gradient.merge_batch_size=4']);
    const steps = combined.history.filter(fits);
    assert.ok(steps.length >= 5, `${steps.length} steps whose patches fit in one group`);
    assert.deepEqual(
      steps.filter((h) => after(h) > 1).map((h) => h.step),
      [],
      'steps with more than one optimizer call after the analysts',
    );
    assert.ok(
      steps.some((h) => (h.n_edits_merged ?? 0) > (h.edit_budget ?? Infinity) && h.n_edits_ranked === h.edit_budget),
      'in some step the merge gave more edits than the budget, and its order chose them',
    );
    const staged = await trainSim(['gradient.merge_batch_size=4', 'gradient.merge_strategy=staged']);
    assert.ok(
      staged.history.some((h) => fits(h) && after(h) === 2),
      'the staged strategy merges, then ranks',
    );
  });

  it('the gate overlap is on by default, off with a candidate pool unless asked for, and then refused', () => {
    const overlap = (evaluation: object, optimizer: object = {}) =>
      trainSettings(ConfigSchema.parse({ evaluation, optimizer })).gate.overlap;
    assert.equal(overlap({}), true);
    assert.equal(overlap({ gate_overlap: false }), false);
    assert.equal(overlap({}, { pool_size: 3 }), false);
    const sizes = { train: 10, val: 10, test: 10 };
    assert.doesNotThrow(() => preflight(ConfigSchema.parse({ optimizer: { pool_size: 3 } }), sizes));
    assert.throws(
      () => preflight(ConfigSchema.parse({ optimizer: { pool_size: 3 }, evaluation: { gate_overlap: true } }), sizes),
      /pool_size and evaluation\.gate_overlap are both on/,
    );
  });

  it("with evaluation.gate_overlap the next step's rollouts and reflection run during the gate: the same decisions, and only a wrong guess costs calls", async () => {
    // A learning rate of 1: the gate accepts and rejects in turn, so that some guesses are wrong.
    const lr1 = ['optimizer.learning_rate=1', 'optimizer.min_learning_rate=1'];
    const plain = await trainSim([...lr1, 'evaluation.gate_overlap=false']);
    const ahead = await trainSim(lr1);
    assert.equal(historyOf(ahead.out), historyOf(plain.out));
    assert.equal(readText(path.join(ahead.out, 'best_skill.md')), readText(path.join(plain.out, 'best_skill.md')));

    const events = readEvents(path.join(ahead.out, 'events.jsonl'));
    const overlaps = events.flatMap((e) => (e.type === 'gate_overlap' ? [e] : []));
    const reflections = events.flatMap((e) => (e.type === 'reflect_ahead' ? [e] : []));
    assert.ok(
      overlaps.some((e) => e.right && e.rollouts > 0),
      'a right guess ran rollouts the next step took',
    );
    assert.ok(
      overlaps.some((e) => !e.right && e.wasted > 0),
      'a wrong guess wasted rollouts',
    );
    assert.ok(
      reflections.some((e) => e.taken > 0 && e.wasted === 0),
      'a right guess made analyst and merge calls the next step took',
    );
    assert.ok(
      reflections.some((e) => e.wasted > 0),
      'a wrong guess wasted optimizer calls',
    );
    // Three steps an epoch: the first boundary only adds the empty slow-update field, so its next step's rollouts can run ahead; the second compares epochs.
    assert.deepEqual(
      overlaps.filter((e) => e.step % 3 === 0).map((e) => e.step),
      [3],
      "the steps that ran the next epoch's first rollouts ahead",
    );
    // Its memory starts empty and the first boundary writes no optimizer notes: its reflection ran ahead too.
    assert.ok(
      reflections.some((e) => e.step === 4 && e.calls > 0),
      `the first step of epoch 2 took or wasted optimizer calls made ahead: ${JSON.stringify(reflections)}`,
    );
    assert.equal(
      readEvents(path.join(plain.out, 'events.jsonl')).filter(
        (e) => e.type === 'gate_overlap' || e.type === 'reflect_ahead',
      ).length,
      0,
      'off when set off',
    );

    // Calls paid by one run and not by the other, by request (a multiset of keys).
    const paid = (out: string, role: string) =>
      readJsonLines<CallRecord>(path.join(out, 'calls.jsonl'))
        .filter((c) => c.role === role && c.from === 'provider')
        .map((c) => c.key);
    const beyond = (a: string[], b: string[]) => {
      const left = new Map<string, number>();
      for (const k of b) left.set(k, (left.get(k) ?? 0) + 1);
      return a.filter((k) => {
        const n = left.get(k) ?? 0;
        left.set(k, n - 1);
        return n <= 0;
      }).length;
    };
    // Every call of the plain run is made by the overlapped one, once; what it pays beyond is exactly what the wrong guesses wasted.
    const sum = (xs: { wasted: number }[]) => xs.reduce((n, e) => n + e.wasted, 0);
    assert.equal(beyond(paid(ahead.out, 'target'), paid(plain.out, 'target')), sum(overlaps));
    assert.equal(beyond(paid(ahead.out, 'optimizer'), paid(plain.out, 'optimizer')), sum(reflections));
    assert.equal(beyond(paid(plain.out, 'optimizer'), paid(ahead.out, 'optimizer')), 0);
  });

  it('a run with the overlap stopped by a call cap, wherever it falls, resumes to the decisions of a run without it', async () => {
    const lr1 = ['optimizer.learning_rate=1', 'optimizer.min_learning_rate=1', 'evaluation.gate_early_accept=true'];
    const plain = await trainSim([...lr1, 'evaluation.gate_overlap=false']);
    const overlap = [...lr1, 'evaluation.gate_overlap=true'];
    // Caps spread over the run (about 640 calls): each stop leaves some steps' work, done ahead or not, to the resume.
    for (const cap of [75, 150, 226, 371]) {
      const out = path.join(tmpDir(), `cap-${cap}`, 'run');
      const stopped = await trainSim([...overlap, `budget.max_calls=${cap}`], out);
      assert.equal(stopped.outcome.status, 'stopped', `cap ${cap}`);
      const finished = await trainSim([...overlap, 'budget.max_calls=0'], out);
      assert.equal(finished.outcome.status, 'finished', `cap ${cap}`);
      assert.equal(historyOf(out), historyOf(plain.out), `cap ${cap}`);
      assert.equal(
        readText(path.join(out, 'best_skill.md')),
        readText(path.join(plain.out, 'best_skill.md')),
        `cap ${cap}`,
      );
    }
  });

  it('an early accept hands the decision on and scores the rest of the selection items while the next step runs: the same history, with or without the overlap', async () => {
    const lr1 = ['optimizer.learning_rate=1', 'optimizer.min_learning_rate=1'];
    for (const overlap of [['evaluation.gate_overlap=false'], []]) {
      const full = await trainSim([...lr1, ...overlap]);
      const early = await trainSim([...lr1, ...overlap, 'evaluation.gate_early_accept=true']);
      assert.equal(historyOf(early.out), historyOf(full.out));
      assert.equal(readText(path.join(early.out, 'best_skill.md')), readText(path.join(full.out, 'best_skill.md')));
      const runtime = (out: string) =>
        pinnedRuntimeState(JSON.parse(readText(path.join(out, 'runtime_state.json'))) as Record<string, unknown>);
      assert.deepEqual(runtime(early.out), runtime(full.out));
      // The same calls in all, each step's counted while it ran.
      const calls = (out: string) =>
        (JSON.parse(readText(path.join(out, 'history.json'))) as HistoryRecord[]).reduce(
          (n, r) => n + Object.values(r.tokens ?? {}).reduce((m, u) => m + u.calls, 0),
          0,
        );
      assert.equal(calls(early.out), calls(full.out));
      // A step that accepted early: the next one started before it finished.
      const overlapped = (out: string) => {
        const events = readEvents(path.join(out, 'events.jsonl'));
        return events
          .filter(
            (e, i) =>
              e.type === 'step_finished' &&
              events.slice(0, i).some((f) => f.type === 'stage_started' && f.step === e.step + 1),
          )
          .map((e) => (e.type === 'step_finished' ? e.action : ''));
      };
      const accepted = overlapped(early.out);
      assert.ok(
        accepted.length > 0 && accepted.every((a) => a.startsWith('accept')),
        `steps overlapped by the next: ${accepted.join(', ')}`,
      );
      assert.deepEqual(overlapped(full.out), []);
    }
  });

  it('a rollout that waited its turn while another caller ran the same one takes that result', async () => {
    const env = new SimEnv({ n_train: 1, n_val: 1, n_test: 1, noise: 0, data_seed: 3 });
    const { val } = await env.load();
    let calls = 0;
    const t = sim();
    const target: ChatModel = {
      id: t.id,
      complete(req) {
        calls++;
        return t.complete(req);
      },
    };
    const rollouts = new Rollouts({ env, target, limit: pLimit(1), cache: new ScoreCache() }, 42);
    // Both are queued before either runs; the second starts after the first is done.
    const [a, b] = await Promise.all([rollouts.run('Answer.', val), rollouts.run('Answer.', val)]);
    assert.equal(calls, 1);
    assert.deepEqual(b.trajectories, a.trajectories);
    assert.deepEqual([a.ran, b.ran, b.cached], [1, 0, 1]);
  });
});
