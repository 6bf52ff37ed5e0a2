import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { BIN, ROOT, runCli } from '../helpers/cli.ts';
import { SIM_CONFIG, readText, trainSim } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

const WORKERS = 4;
const ANALYSTS = 2;
// Slow enough to be caught midway; small pools so that few calls can be in flight at the kill.
const OPTIONS = ['model.target.options.latency_ms=15', 'model.optimizer.options.latency_ms=15', `env.workers=${WORKERS}`, `gradient.analyst_workers=${ANALYSTS}`];

/** history.json without what each step paid (tokens, rollouts run): a resumed step pays less. */
const historyOf = (out: string) =>
  JSON.stringify(
    (JSON.parse(readText(path.join(out, 'history.json'))) as Record<string, unknown>[]).map(({ tokens: _t, gate, ...r }) => {
      const { rollouts_used: _u, rollouts_saved: _s, cache_hits: _c, ...decision } = (gate ?? {}) as Record<string, unknown>;
      return { ...r, gate: decision };
    }),
    null,
    1,
  );

const providerCalls = (out: string) =>
  readText(path.join(out, 'calls.jsonl'))
    .split('\n')
    .filter((l) => l.includes('"from":"provider"')).length;

function train(out: string, extra: string[] = []) {
  return spawn(process.execPath, [BIN, 'train', '--config', SIM_CONFIG, '--out', out, '--cfg-options', ...OPTIONS, ...extra], { cwd: ROOT, stdio: 'ignore' });
}

describe('resume', () => {
  it('a run killed at a random moment resumes to the same result without paying again for finished calls', async () => {
    const reference = path.join(tmpDir(), 'uninterrupted');
    const full = runCli(['train', '--config', SIM_CONFIG, '--out', reference, '--cfg-options', ...OPTIONS]);
    assert.equal(full.status, 0, full.stderr);
    // How long the training itself takes (from the first event to the last), whatever the start-up time.
    const times = readText(path.join(reference, 'events.jsonl')).trim().split('\n').map((l) => Date.parse(JSON.parse(l).time));
    const duration = times.at(-1)! - times[0]!;
    const referenceCalls = providerCalls(reference);

    for (const fraction of [0.1 + Math.random() * 0.4, 0.5 + Math.random() * 0.4]) {
      const out = path.join(tmpDir(), 'killed');
      const child = train(out);
      while (!fs.existsSync(path.join(out, 'events.jsonl'))) await sleep(10);
      await sleep(duration * fraction);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }
      const before = fs.existsSync(path.join(out, 'calls.jsonl')) ? providerCalls(out) : 0;
      const resumed = runCli(['train', '--config', SIM_CONFIG, '--out', out, '--cfg-options', ...OPTIONS]);
      assert.equal(resumed.status, 0, `resume after a kill at ${Math.round(fraction * 100)}%: ${resumed.stderr}`);
      assert.equal(historyOf(out), historyOf(reference), `same history after a kill at ${Math.round(fraction * 100)}%`);
      assert.equal(readText(path.join(out, 'best_skill.md')), readText(path.join(reference, 'best_skill.md')));
      const s = JSON.parse(readText(path.join(out, 'summary.json')));
      const r = JSON.parse(readText(path.join(reference, 'summary.json')));
      assert.deepEqual([s.baseline_test_hard, s.test_hard, s.final_test_hard], [r.baseline_test_hard, r.test_hard, r.final_test_hard]);
      const total = providerCalls(out);
      // At most: the uninterrupted run's calls, plus those in flight at the kill (one pool of rollouts, one of analysts, and the merges of a step).
      const inFlight = WORKERS + ANALYSTS + 4;
      assert.ok(total <= referenceCalls + inFlight, `paid ${total} calls (${before} before the kill) vs ${referenceCalls} uninterrupted`);
      assert.ok(before > 0, 'the kill came after some calls were made');
    }
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
    assert.equal(runCli(['train', '--config', SIM_CONFIG, '--out', out, '--cfg-options', 'train.num_epochs=1']).status, 0);
    const changed = runCli(['train', '--config', SIM_CONFIG, '--out', out, '--cfg-options', 'train.num_epochs=1', 'train.batch_size=10']);
    assert.equal(changed.status, 2);
    assert.match(changed.stderr, /different config \(train\.batch_size: 20 -> 10\)/);
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
  const POOLS = ['model.target.concurrency=4', 'model.optimizer.concurrency=2', 'env.workers=4', 'gradient.analyst_workers=2', 'model.target.options.latency_ms=2', 'model.optimizer.options.latency_ms=2'];
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
      assert.match(readText(path.join(out, 'events.jsonl')), new RegExp(`"type":"run_stopped","reason":"budget".*budget\\.max_calls=${cap}`));
      const finished = await trainSim([...POOLS, 'budget.max_calls=0'], out);
      assert.equal(finished.outcome.status, 'finished', `cap ${cap}`);
      assert.equal(historyOf(out), historyOf(reference.out), `cap ${cap}: the same history`);
      assert.equal(readText(path.join(out, 'best_skill.md')), readText(path.join(reference.out, 'best_skill.md')));
    }
  });

  it('the CLI reports a budget stop clearly', () => {
    const out = path.join(tmpDir(), 'run');
    const r = runCli(['train', '--config', SIM_CONFIG, '--out', out, '--cfg-options', 'budget.max_tokens=20000']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /budget reached: \d+ tokens used, limit budget\.max_tokens=20000\. The run is saved; raise the limit/);
  });
});
