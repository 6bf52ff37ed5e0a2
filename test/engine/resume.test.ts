import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import type { HistoryRecord } from '../../src/run/records.ts';
import { Ledger } from '../../src/model/ledger.ts';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, type TestContext } from 'node:test';
import { readJsonLines } from '../../src/run/atomic.ts';
import type { CallRecord } from '../../src/model/ledger.ts';
import { BIN, ROOT, runCli } from '../helpers/cli.ts';
import { readEvents } from '../../src/run/events.ts';
import { Rng } from '../../src/util/random.ts';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/app/train.ts';
import { UserError } from '../../src/errors.ts';
import { buildBackendModel } from '../../src/model/stack.ts';
import { FatalModelError, type ChatModel } from '../../src/model/types.ts';
import { SIM_CONFIG, historyOf, readText, snapshot, trainSim } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

const WORKERS = 4;
const ANALYSTS = 2;
// Slow enough to be caught midway; small pools so that few calls can be in flight at the kill.
const OPTIONS = [
  'model.target.options.latency_ms=15',
  'model.optimizer.options.latency_ms=15',
  `env.workers=${WORKERS}`,
  `gradient.analyst_workers=${ANALYSTS}`,
  // The reference runs without the overlap, whose wrong guesses waste as much as timing lets them.
  'evaluation.gate_overlap=false',
  // Each run is a measurement of its own: its test split is scored even where another run sealed it.
  'evaluation.audit.rescore_test=true',
];

/** How many times each request was paid at the provider, by its key. */
function paidKeys(out: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const c of readJsonLines<CallRecord>(path.join(out, 'calls.jsonl')))
    if (c.from === 'provider' && !c.error) counts.set(c.key, (counts.get(c.key) ?? 0) + 1);
  return counts;
}

const providerCalls = (out: string) =>
  fs.existsSync(path.join(out, 'calls.jsonl'))
    ? readText(path.join(out, 'calls.jsonl'))
        .split('\n')
        .filter((l) => l.includes('"from":"provider"')).length
    : 0;

/** Every file of a folder (none: undefined) with its bytes and mode: a package as written. */
function folderTree(dir: string): Record<string, string> | undefined {
  if (!fs.existsSync(dir)) return undefined;
  const out: Record<string, string> = {};
  for (const rel of (fs.readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const stat = fs.statSync(path.join(dir, rel));
    if (stat.isFile())
      out[rel] = `${(stat.mode & 0o777).toString(8)} ${fs.readFileSync(path.join(dir, rel)).toString('base64')}`;
  }
  return out;
}

/** The events of a run that do not depend on timing (all but progress). */
const lastingEvents = (out: string) =>
  readEvents(path.join(out, 'events.jsonl')).filter((e) => e.type !== 'stage_progress') as {
    type: string;
    stage?: string;
  }[];

function train(out: string, extra: string[] = []) {
  return spawn(
    process.execPath,
    [BIN, 'train', '--config', SIM_CONFIG, '--out', out, '--cfg-options', ...OPTIONS, ...extra],
    { cwd: ROOT, stdio: 'ignore' },
  );
}

describe('resume', () => {
  /**
   * Kills `skillopt train` (with `extra` options) at two random moments and resumes it: the decisions
   * and scores of `reference` (a run without them), and no call of the reference paid more often
   * than there, but for those in flight at the kill. `paysAsReference`: nothing else is paid either
   * (with the gate overlap, a wrong guess pays for calls the reference never makes).
   */
  async function killAndResume(
    t: TestContext,
    extra: string[],
    reference: string,
    paysAsReference: boolean,
  ): Promise<void> {
    // The moments are drawn from a seed, printed so that a failure can be looked at again.
    const seed = Number(process.env.SKILLOPT_TEST_SEED ?? Date.now() % 1e9);
    t.diagnostic(`kill moments drawn with SKILLOPT_TEST_SEED=${seed}`);
    const rng = new Rng(seed);
    let uninterrupted = reference;
    if (extra.length > 0) {
      uninterrupted = path.join(tmpDir(), 'uninterrupted');
      const full = runCli([
        'train',
        '--config',
        SIM_CONFIG,
        '--out',
        uninterrupted,
        '--cfg-options',
        ...OPTIONS,
        ...extra,
      ]);
      assert.equal(full.status, 0, full.stderr);
      assert.equal(historyOf(uninterrupted), historyOf(reference));
    }
    // A moment is "after the n-th event" (progress events aside: their number depends on timing).
    // It is drawn between the first and the last step's start, so the child still has at least
    // a step, an epoch boundary and the test evaluation to do when it is killed.
    const marks = lastingEvents(uninterrupted);
    const firstStep = marks.findIndex((e) => e.type === 'stage_started' && e.stage === 'rollout');
    const lastStep = marks.findLastIndex((e) => e.type === 'stage_started' && e.stage === 'rollout');
    const middle = Math.floor((firstStep + lastStep) / 2);
    const referenceKeys = paidKeys(reference);

    for (const [from, to] of [
      [firstStep, middle],
      [middle, lastStep],
    ] as const) {
      const moment = rng.int(from, to);
      const at = `a kill after event ${moment} of ${marks.length} (seed ${seed})`;
      const out = path.join(tmpDir(), 'killed');
      const child = train(out, extra);
      const exited = new Promise((r) => child.once('exit', r));
      const alive = () => child.exitCode === null && child.signalCode === null;
      while (lastingEvents(out).length < moment && alive()) await sleep(10);
      assert.ok(alive(), `the child is still training at ${at}`);
      child.kill('SIGKILL');
      await exited;
      const before = providerCalls(out);
      assert.ok(before > 0, `calls were made before ${at}`);
      assert.ok(!fs.existsSync(path.join(out, 'summary.json')), `the run was not finished at ${at}`);
      const resumed = runCli(['train', '--config', SIM_CONFIG, '--out', out, '--cfg-options', ...OPTIONS, ...extra]);
      assert.equal(resumed.status, 0, `resume after ${at}: ${resumed.stderr}`);
      assert.equal(historyOf(out), historyOf(reference), `same history after ${at}`);
      assert.equal(readText(path.join(out, 'best_skill.md')), readText(path.join(reference, 'best_skill.md')));
      assert.deepEqual(
        folderTree(path.join(out, 'best_skill')),
        folderTree(path.join(reference, 'best_skill')),
        `the best package after ${at}`,
      );
      const s = JSON.parse(readText(path.join(out, 'summary.json')));
      const r = JSON.parse(readText(path.join(reference, 'summary.json')));
      assert.deepEqual(
        [s.baseline_test_hard, s.test_hard, s.final_test_hard],
        [r.baseline_test_hard, r.test_hard, r.final_test_hard],
      );
      // At most those in flight at the kill are paid again (one pool of rollouts, one of analysts, and the merges of a step).
      const inFlight = WORKERS + ANALYSTS + 4;
      const keys = paidKeys(out);
      let again = 0;
      let other = 0;
      for (const [key, n] of keys) {
        const m = referenceKeys.get(key);
        if (m === undefined) other += n;
        else again += Math.max(0, n - m);
      }
      assert.ok(again <= inFlight, `${again} of the reference's calls paid again (${before} paid before ${at})`);
      if (paysAsReference) {
        assert.equal(other, 0, `calls the reference did not make, after ${at}`);
        // What each step and the run used is what the uninterrupted run used (a wrong guess of the
        // overlap wastes as much as timing lets it, so only a run without it is compared).
        const tokens = (dir: string) =>
          (JSON.parse(readText(path.join(dir, 'history.json'))) as HistoryRecord[]).map((h) => h.tokens);
        assert.deepEqual(tokens(out), tokens(reference), `each step's calls and tokens after ${at}`);
        assert.deepEqual(s.token_summary, r.token_summary, `the run's calls and tokens after ${at}`);
      }
    }
  }

  it('a run killed at a random moment resumes to the same result without paying again for finished calls', async (t) => {
    const reference = path.join(tmpDir(), 'uninterrupted');
    const full = runCli(['train', '--config', SIM_CONFIG, '--out', reference, '--cfg-options', ...OPTIONS]);
    assert.equal(full.status, 0, full.stderr);
    await killAndResume(t, [], reference, true);
  });

  it('so does a run with the gate overlap and the early accept, killed with work for the next step in flight', async (t) => {
    const reference = path.join(tmpDir(), 'uninterrupted');
    const full = runCli(['train', '--config', SIM_CONFIG, '--out', reference, '--cfg-options', ...OPTIONS]);
    assert.equal(full.status, 0, full.stderr);
    await killAndResume(t, ['evaluation.gate_overlap=true', 'evaluation.gate_early_accept=true'], reference, false);
  });

  it('so does a run training a skill package: its files come back byte for byte with their modes', async (t) => {
    const extra = [`env.skill_init=${path.join(ROOT, 'configs/sim/package-skill')}`];
    const reference = path.join(tmpDir(), 'package');
    const full = runCli(['train', '--config', SIM_CONFIG, '--out', reference, '--cfg-options', ...OPTIONS, ...extra]);
    assert.equal(full.status, 0, full.stderr);
    assert.ok(folderTree(path.join(reference, 'best_skill')), 'the reference wrote its best package');
    await killAndResume(t, extra, reference, true);
  });

  it('rerunning a finished run pays for nothing', async () => {
    const first = await trainSim();
    const calls = providerCalls(first.out);
    const again = await trainSim([], first.out);
    assert.equal(providerCalls(first.out), calls, 'no new provider calls');
    assert.deepEqual(again.summary.test_hard, first.summary.test_hard);
  });

  it('refuses to resume a run directory with a different training config', () => {
    const out = path.join(tmpDir(), 'run');
    assert.equal(
      runCli(['train', '--config', SIM_CONFIG, '--out', out, '--cfg-options', 'train.num_epochs=1']).status,
      0,
    );
    const changed = runCli([
      'train',
      '--config',
      SIM_CONFIG,
      '--out',
      out,
      '--cfg-options',
      'train.num_epochs=1',
      'train.batch_size=10',
    ]);
    assert.equal(changed.status, 2);
    assert.match(changed.stderr, /different config \(train\.batch_size: 20 -> 10\)/);
  });

  it('a resume may change how the models are reached (endpoints, keys, timeouts, pools, retries), not what is trained', async () => {
    const out = path.join(tmpDir(), 'run');
    const endpoint = [
      'model.target.base_url=http://127.0.0.1:8000/v1',
      'model.optimizer.base_url=http://127.0.0.1:8000/v1',
    ];
    const stopped = await trainSim([...endpoint, 'budget.max_calls=100'], out);
    assert.equal(stopped.outcome.status, 'stopped');
    const before = snapshot(out);
    for (const [change, shown] of [
      ['model.optimizer.model=sim-2', 'model.optimizer.model: "sim-1" -> "sim-2"'],
      ['model.target.temperature=0.5', 'model.target.temperature: undefined -> 0.5'],
      ['optimizer.learning_rate=2', 'optimizer.learning_rate: 4 -> 2'],
      ['env.n_train=40', 'env.n_train: 60 -> 40'],
    ] as const) {
      await assert.rejects(
        trainSim([...endpoint, change], out),
        (err: Error) => err instanceof UserError && err.message.includes(shown),
      );
      assert.deepEqual(snapshot(out), before, `refusing ${change} writes nothing`);
    }
    const resumed = await trainSim(
      [
        'model.target.base_url=http://localhost:8000/v1',
        'model.optimizer.base_url=http://localhost:8000/v1/',
        'model.target.api_key_env=OTHER_API_KEY',
        'model.target.timeout_s=30',
        'model.optimizer.max_retries=1',
        'model.target.backoff_s=0.5',
        'model.target.backoff_max_s=5',
        'model.target.concurrency=3',
        'model.target.rpm=6000',
        'model.target.pool=shared',
        'model.optimizer.pool=shared',
        'model.target.price.input=1',
        'model.target.price.output=2',
      ],
      out,
    );
    assert.equal(resumed.outcome.status, 'finished');
    assert.equal(historyOf(out), historyOf((await trainSim()).out));
  });

  it('a stop request (Ctrl-C) admits no new call, lets those in flight finish and records them; the run resumes to the uninterrupted result', async () => {
    const out = path.join(tmpDir(), 'run');
    const loaded = loadConfig(SIM_CONFIG, { overrides: ['model.target.options.latency_ms=5'], environment: {} });
    const sim = await buildBackendModel('target', loaded.config.model.target, loaded.config, {});
    const stop = new AbortController();
    let started = 0;
    let finished = 0;
    let startedAfterStop = 0;
    const target: ChatModel = {
      id: sim.id,
      async complete(req) {
        if (stop.signal.aborted) startedAfterStop++;
        // Mid-run: after the baseline (30 calls) and the first steps' rollouts.
        if (++started === 100) stop.abort();
        try {
          return await sim.complete(req);
        } finally {
          finished++;
        }
      },
    };
    const outcome = await runTraining({
      loaded,
      outRoot: out,
      configFile: SIM_CONFIG,
      console: false,
      models: { target },
      signal: stop.signal,
    });
    assert.equal(outcome.status, 'stopped');
    assert.ok(outcome.status === 'stopped' && outcome.cause === 'interrupted');
    assert.equal(outcome.resumeCommand, `skillopt train --config ${SIM_CONFIG} --resume ${out}`);
    assert.equal(startedAfterStop, 0, 'no call starts after the stop');
    assert.equal(finished, started, 'the calls in flight finished before the run returned');
    const recorded = readText(path.join(out, 'calls.jsonl'))
      .split('\n')
      .filter((l) => l.includes('"role":"target"') && l.includes('"from":"provider"'));
    assert.equal(recorded.length, started, 'every call made is in the ledger');
    assert.ok(!fs.existsSync(path.join(out, 'run.lock')));
    const runtime = JSON.parse(readText(path.join(out, 'runtime_state.json')));
    assert.equal(runtime.status, 'stopped');
    assert.match(
      readText(path.join(out, 'events.jsonl')),
      new RegExp(
        `"type":"run_stopped","reason":"interrupted",.*"resume_command":"skillopt train --config ${SIM_CONFIG} --resume ${out}"`,
      ),
    );

    const resumed = await trainSim([], out);
    assert.equal(resumed.outcome.status, 'finished');
    const reference = await trainSim();
    assert.equal(historyOf(out), historyOf(reference.out));
    const targetCalls = (run: string) =>
      readText(path.join(run, 'calls.jsonl'))
        .split('\n')
        .filter((l) => l.includes('"role":"target"') && l.includes('"from":"provider"')).length;
    assert.ok(
      targetCalls(out) <= targetCalls(reference.out),
      `paid ${targetCalls(out)} target calls in all, ${targetCalls(reference.out)} uninterrupted: none twice`,
    );
  });

  it('a new run that fails before anything is paid for leaves no directory, nor the parents it made', async () => {
    const dir = tmpDir();
    const out = path.join(dir, 'a', 'b', 'run');
    const target: ChatModel = {
      id: 'broken:x',
      complete: () => Promise.reject(new FatalModelError('the provider refused the key (401)')),
    };
    const loaded = loadConfig(SIM_CONFIG, { environment: {} });
    await assert.rejects(
      runTraining({ loaded, outRoot: out, configFile: SIM_CONFIG, console: false, models: { target } }),
      /refused the key/,
    );
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing left');
  });
});

describe('budget', () => {
  it('stops with a resumable state, and the run resumes when the limit is raised', async () => {
    const out = path.join(tmpDir(), 'run');
    const stopped = await trainSim(['budget.max_calls=150'], out);
    assert.equal(stopped.outcome.status, 'stopped');
    const runtime = JSON.parse(readText(path.join(out, 'runtime_state.json')));
    assert.equal(runtime.status, 'stopped');
    assert.ok(runtime.last_completed_step >= 1 && runtime.last_completed_step < 9);
    assert.ok(!fs.existsSync(path.join(out, 'summary.json')));
    const events = readText(path.join(out, 'events.jsonl'));
    assert.match(events, /"type":"run_stopped".*budget\.max_calls=150/);
    // As if a crash came between writing the next step's best skill and committing that step.
    fs.writeFileSync(path.join(out, 'best_skill.md'), 'an uncommitted candidate');
    const finished = await trainSim(['budget.max_calls=0'], out);
    assert.equal(finished.outcome.status, 'finished');
    const reference = await trainSim();
    assert.equal(historyOf(out), historyOf(reference.out));
  });

  // Small pools and a little latency, so that calls overlap as they do against a provider.
  const POOLS = [
    'model.target.concurrency=4',
    'model.optimizer.concurrency=2',
    'env.workers=4',
    'gradient.analyst_workers=2',
    'model.target.options.latency_ms=2',
    'model.optimizer.options.latency_ms=2',
  ];
  const IN_FLIGHT = 4 + 2;

  it('a cap of N calls is overshot by at most the calls in flight, wherever it falls; raised, the run resumes to the same result', async () => {
    const reference = await trainSim(POOLS);
    // In the baseline, within a step's rollouts, within a later stage.
    for (const cap of [10, 47, 133]) {
      const out = path.join(tmpDir(), 'run');
      const stopped = await trainSim([...POOLS, `budget.max_calls=${cap}`], out);
      assert.equal(stopped.outcome.status, 'stopped');
      const paid = providerCalls(out);
      assert.ok(paid >= cap && paid <= cap + IN_FLIGHT, `cap ${cap}: ${paid} calls`);
      assert.match(
        readText(path.join(out, 'events.jsonl')),
        new RegExp(`"type":"run_stopped","reason":"budget".*budget\\.max_calls=${cap}`),
      );
      const finished = await trainSim([...POOLS, 'budget.max_calls=0'], out);
      assert.equal(finished.outcome.status, 'finished', `cap ${cap}`);
      assert.equal(historyOf(out), historyOf(reference.out), `cap ${cap}: the same history`);
      assert.equal(readText(path.join(out, 'best_skill.md')), readText(path.join(reference.out, 'best_skill.md')));
    }
  });

  it('a cap counts the calls a killed process sent and never recorded: the run sends no more than the cap allows', async () => {
    const cap = 150;
    const out = path.join(tmpDir(), 'killed-capped');
    const options = [...OPTIONS.filter((o) => !o.includes('latency_ms')), 'model.target.options.latency_ms=60'];
    const args = [
      'train',
      '--config',
      SIM_CONFIG,
      '--out',
      out,
      '--cfg-options',
      ...options,
      `budget.max_calls=${cap}`,
    ];
    const lines = (file: string) => (fs.existsSync(file) ? readText(file).split('\n').filter(Boolean).length : 0);
    const sentFile = path.join(out, 'calls.sent.jsonl');
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    // Killed while several calls are out: sent, and not recorded.
    while (child.exitCode === null && !(lines(sentFile) > 40 && lines(sentFile) - providerCalls(out) >= 3))
      await sleep(5);
    child.kill('SIGKILL');
    await exited;
    const lost = new Ledger(path.join(out, 'calls.jsonl'));
    assert.ok(lost.lostCalls >= 1, `calls were in flight at the kill (${lost.lostCalls})`);
    lost.close();
    const resumed = runCli(args);
    assert.equal(resumed.status, 0, resumed.stderr);
    const sent = lines(sentFile);
    const ledger = new Ledger(path.join(out, 'calls.jsonl'));
    assert.equal(ledger.totals().calls, sent, 'every call sent counts, those lost at the kill too');
    ledger.close();
    assert.ok(sent >= cap && sent <= cap + WORKERS + ANALYSTS, `${sent} calls sent under a cap of ${cap}`);
  });

  it('the CLI reports a budget stop clearly', () => {
    const out = path.join(tmpDir(), 'run');
    const r = runCli(['train', '--config', SIM_CONFIG, '--out', out, '--cfg-options', 'budget.max_tokens=20000']);
    assert.equal(r.status, 0);
    assert.match(
      r.stdout,
      /budget reached: \d+ tokens used, limit budget\.max_tokens=20000\. The run is saved; raise the limit/,
    );
  });
});
