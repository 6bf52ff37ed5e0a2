/**
 * `skillopt eval` on the test split under the seal: the first figure of a skill on a target is
 * sealed; a second evaluation of it from another directory shows the sealed figure, item by item,
 * without a call; one that asks to score again does, and the seal records it; other splits are
 * free.
 */
import '../../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runEvaluation } from '../../../src/app/eval/evaluate.ts';
import { readJson } from '../../../src/run/atomic.ts';
import { loadConfig } from '../../../src/config/load.ts';
import { ROOT } from '../../helpers/cli.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { SIM_CONFIG, trainSim } from '../../helpers/train.ts';

const SEED = path.join(ROOT, 'configs/sim/seed_skill.md');

function project() {
  const dir = tmpDir();
  const loaded = loadConfig(SIM_CONFIG, {
    overrides: [`evaluation.audit.seal_dir=${path.join(dir, 'seals')}`, 'env.n_test=12'],
    environment: {},
  });
  const run = (out: string, extra: { split?: string; rescoreTest?: boolean } = {}) =>
    runEvaluation({
      loaded,
      outRoot: path.join(dir, out),
      configFile: SIM_CONFIG,
      skillFiles: [SEED],
      split: extra.split ?? 'test',
      out: null,
      ...(extra.rescoreTest ? { rescoreTest: true } : {}),
    });
  return { dir, run };
}

describe('skillopt eval under the seal', () => {
  it('seals the first test figure, refuses a second from elsewhere, and records a re-score asked for', async () => {
    const { dir, run } = project();
    const first = await run('first');
    const seals = fs.readdirSync(path.join(dir, 'seals'));
    assert.equal(seals.length, 1);
    const file = path.join(dir, 'seals', seals[0]!);
    const seal = readJson<{ hard: number; run: string; rescored: unknown[] }>(file)!;
    assert.deepEqual([seal.hard, seal.run, seal.rescored], [first.hard, path.join(dir, 'first'), []]);

    // The same directory again continues its own evaluation.
    await run('first');
    const second = await run('second');
    const cell = second.cells[0]!;
    assert.deepEqual(
      [cell.hard, cell.soft, cell.n_items],
      [first.cells[0]!.hard, first.cells[0]!.soft, first.cells[0]!.n_items],
    );
    assert.equal(cell.sealed?.by, path.join(dir, 'first'));
    assert.equal(fs.existsSync(path.join(dir, 'second', 'rollouts')), false, 'no rollout was run');
    const calls = path.join(dir, 'second', 'calls.jsonl');
    assert.ok(!fs.existsSync(calls) || fs.readFileSync(calls, 'utf8').trim() === '', 'no call was made');
    assert.ok(await run('val', { split: 'val' }), 'another split is free');

    const again = await run('third', { rescoreTest: true });
    assert.equal(again.hard, first.hard);
    const after = readJson<{ hard: number; rescored: { run: string; hard: number }[] }>(file)!;
    assert.deepEqual(
      after.rescored.map((r) => [r.run, r.hard]),
      [[path.join(dir, 'third'), first.hard]],
    );
    assert.equal(after.hard, first.hard, 'the sealed figure stays the first');
  });

  it("an evaluation after training shows the run's sealed figure of its initial skill", async () => {
    const { dir, run } = project();
    const trained = await trainSim([
      'train.num_epochs=1',
      'env.n_test=12',
      `evaluation.audit.seal_dir=${path.join(dir, 'seals')}`,
    ]);
    const after = await run('after-training');
    assert.equal(after.cells[0]!.sealed?.by, trained.out);
    assert.equal(after.cells[0]!.hard, trained.summary.baseline_test_hard);
  });
});
