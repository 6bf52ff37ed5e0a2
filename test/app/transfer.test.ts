/**
 * Transfer at the end of training (`evaluation.transfer_targets`): the initial and best skills
 * on each other target, with intervals and paired tests as `skillopt eval` computes them, in
 * `summary.json`.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runEvaluation } from '../../src/eval/evaluate.ts';
import { loadConfig } from '../../src/config/load.ts';
import { TransferSchema } from '../../src/run/records.ts';
import { UserError } from '../../src/errors.ts';
import { SIM_CONFIG, trainSim } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

describe('transfer at the end of training', () => {
  it('scores the initial and best skills on each target into summary.json, as skillopt eval does; none by default', async () => {
    const targets = ['sim:sim-2', 'sim:sim-3'];
    const { out, summary } = await trainSim(['train.num_epochs=1', `evaluation.transfer_targets=${JSON.stringify(targets)}`]);
    const transfer = TransferSchema.parse(summary.transfer);
    assert.deepEqual(
      transfer.rows.map((r) => r.target),
      targets,
    );
    assert.equal(transfer.split, 'test');
    assert.equal(transfer.n_items, 60);
    assert.ok(fs.existsSync(path.join(out, transfer.dir, 'eval_summary.json')));

    // The same evaluation, run apart on the run's initial and best skill files.
    const apart = await runEvaluation({
      loaded: loadConfig(SIM_CONFIG, { environment: {} }),
      outRoot: path.join(tmpDir('skillopt-transfer-'), 'eval'),
      configFile: SIM_CONFIG,
      skillFiles: [path.join(out, 'skills', 'skill_v0000.md'), path.join(out, 'best_skill.md')],
      split: 'test',
      targets,
      environment: {},
      out: null,
    });
    for (const [i, row] of transfer.rows.entries()) {
      const cmp = apart.comparisons[i]!;
      assert.deepEqual(row.hard, cmp.hard, `${row.target}: the paired test of the hard scores`);
      assert.deepEqual(row.soft, cmp.soft);
      const cells = apart.cells.filter((c) => c.target === cmp.target);
      assert.deepEqual([row.initial.hard, row.best.hard], cells.map((c) => c.hard));
      assert.deepEqual(row.best.hard_ci95, cells[1]!.hard_ci95);
    }
    assert.ok(transfer.rows.every((r) => r.best.hard > r.initial.hard && r.hard.p !== null && r.hard.p < 0.05), 'the trained skill transfers on the simulator');

    const plain = await trainSim(['train.num_epochs=1']);
    assert.equal(plain.summary.transfer, undefined);
    assert.equal(fs.existsSync(path.join(plain.out, 'transfer')), false);
  });

  it('a target that is not BACKEND:MODEL with a known backend is refused before anything is written', async () => {
    const out = path.join(tmpDir('skillopt-transfer-'), 'run');
    await assert.rejects(
      trainSim(['evaluation.transfer_targets=["nosuch:model"]'], out),
      (e: unknown) => e instanceof UserError && /^evaluation\.transfer_targets\[0\]: nosuch:model: unknown backend 'nosuch'/.test(e.message),
    );
    await assert.rejects(trainSim(['evaluation.transfer_targets=["sim"]'], out), /evaluation\.transfer_targets\[0\]: sim: expected BACKEND:MODEL/);
    assert.equal(fs.existsSync(out), false);
  });
});
