import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/engine/run.ts';
import { SimModel } from '../../src/model/sim/backend.ts';
import { FatalModelError, InfraError, type ChatModel, type ChatRequest } from '../../src/model/types.ts';
import { unitHash } from '../../src/util/random.ts';
import { SIM_CONFIG, readText } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

const sim = () => new SimModel('sim-1', 42, 0, { harmful: 0.3, irrelevant: 0.35, vague: 0.15, blame: 0.35 });

function train(target: ChatModel, overrides: string[] = []) {
  const out = path.join(tmpDir(), 'run');
  const loaded = loadConfig(SIM_CONFIG, { overrides, environment: {} });
  return { out, run: runTraining({ loaded, outRoot: out, configFile: SIM_CONFIG, console: false, models: { target } }) };
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
    assert.match(readText(path.join(out, 'events.jsonl')), /"type":"run_failed".*OPENAI_API_KEY/);
  });

  it('infrastructure errors are recorded on the trajectory and kept out of scores', async () => {
    const inner = sim();
    const target: ChatModel = {
      id: inner.id,
      complete(req: ChatRequest) {
        const id = (req.meta as { task: { id: string } }).task.id;
        if (unitHash('flaky', id) < 0.2) return Promise.reject(new InfraError('503 after 5 retries', 'server', 5));
        return inner.complete(req);
      },
    };
    const { out, run } = train(target, ['train.num_epochs=1']);
    const outcome = await run;
    assert.equal(outcome.status, 'finished');
    const lines = readText(path.join(out, 'selection_eval_baseline/results.jsonl')).trim().split('\n').map((l) => JSON.parse(l));
    const errors = lines.filter((l) => l.error);
    assert.ok(errors.length > 0 && errors.every((l) => l.error.kind === 'server'));
    const scored = lines.filter((l) => !l.error);
    const baseline = JSON.parse(readText(path.join(out, 'runtime_state.json'))).baseline_score;
    assert.equal(baseline, scored.reduce((s, l) => s + l.hard, 0) / scored.length, 'errors are not counted as failures');
    const history = JSON.parse(readText(path.join(out, 'history.json')));
    assert.ok(history.some((h: { rollout_errors: number }) => h.rollout_errors > 0));
    assert.ok(!fs.readdirSync(out).includes('summary.json') || JSON.parse(readText(path.join(out, 'summary.json'))).test_hard !== null);
  });

  it('a target failing on every item stops the run with a clear message', async () => {
    const target: ChatModel = { id: 'down:x', complete: () => Promise.reject(new InfraError('connection refused', 'network', 5)) };
    const { run } = train(target);
    await assert.rejects(run, /failed on every selection item; check the target model/);
  });
});
