import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { preflight } from '../../src/config/preflight.ts';
import { runTraining } from '../../src/app/train.ts';
import { UserError } from '../../src/errors.ts';
import type { ChatModel } from '../../src/model/types.ts';
import { SIM_CONFIG } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

const sim = (overrides: string[]) => loadConfig(SIM_CONFIG, { environment: {}, overrides }).config;
const sizes = { train: 60, val: 30, test: 60 };

describe('preflight: training settings refused or warned before any call', () => {
  it('a learning rate of 0 is refused (no step could apply an edit), except in full-rewrite mode where it is unused', () => {
    assert.throws(
      () => preflight(sim(['optimizer.learning_rate=0']), sizes),
      (e: unknown) => e instanceof UserError && /optimizer\.learning_rate is 0: .*learn nothing/.test(e.message),
    );
    assert.throws(
      () => preflight(sim(['optimizer.learning_rate=0', 'optimizer.lr_scheduler=autonomous']), sizes),
      /learning_rate is 0/,
    );
    assert.deepEqual(
      preflight(sim(['optimizer.learning_rate=0', 'optimizer.skill_update_mode=full_rewrite_minibatch']), sizes),
      [],
    );
  });

  it('the paired gate with the semantic-density bonus is refused (the bonus belongs to no item), each alone is fine', () => {
    assert.throws(
      () => preflight(sim(['evaluation.gate=paired', 'evaluation.use_semantic_density=true']), sizes),
      (e: unknown) =>
        e instanceof UserError && /evaluation\.gate is paired and evaluation\.use_semantic_density/.test(e.message),
    );
    assert.deepEqual(preflight(sim(['evaluation.gate=paired']), sizes), []);
    assert.deepEqual(preflight(sim(['evaluation.use_semantic_density=true']), sizes), []);
  });

  it('a pool merge without a pool, or outside patch mode, and a pool with skill-aware reflection are refused', () => {
    const refused = (o: string[], re: RegExp) =>
      assert.throws(
        () => preflight(sim(o), sizes),
        (e: unknown) => e instanceof UserError && re.test(e.message),
      );
    refused(
      ['optimizer.pool_merge=true'],
      /optimizer\.pool_merge .* needs optimizer\.pool_size of 2 or more \(it is 0\)/,
    );
    refused(
      ['optimizer.pool_size=3', 'optimizer.pool_merge=true', 'optimizer.skill_update_mode=rewrite_from_suggestions'],
      /only the patch mode makes edits/,
    );
    refused(
      ['optimizer.pool_size=3', 'optimizer.use_skill_aware_reflection=true'],
      /optimizer\.pool_size and optimizer\.use_skill_aware_reflection are both on/,
    );
    refused(
      ['optimizer.pool_size=3', 'evaluation.gate_overlap=true'],
      /optimizer\.pool_size and evaluation\.gate_overlap are both on/,
    );
    assert.deepEqual(preflight(sim(['optimizer.pool_size=3', 'optimizer.pool_merge=true']), sizes), []);
  });

  it('min_learning_rate above learning_rate is refused for the schedules that decay to it, with the value to use', () => {
    for (const s of ['cosine', 'linear']) {
      assert.throws(
        () =>
          preflight(
            sim(['optimizer.learning_rate=1', 'optimizer.min_learning_rate=2', `optimizer.lr_scheduler=${s}`]),
            sizes,
          ),
        new RegExp(
          `min_learning_rate \\(2\\) is above optimizer\\.learning_rate \\(1\\): the ${s} schedule .* set min_learning_rate to 1 or less`,
        ),
      );
    }
    // A constant schedule never reads the minimum.
    assert.deepEqual(
      preflight(
        sim(['optimizer.learning_rate=1', 'optimizer.min_learning_rate=2', 'optimizer.lr_scheduler=constant']),
        sizes,
      ),
      [],
    );
  });

  it('a train split smaller than a batch is warned about (the original allows it: one short step per epoch)', () => {
    const w = preflight(sim(['train.batch_size=40']), { train: 12, val: 5, test: 5 });
    assert.deepEqual(w, [
      'the train split has 12 items, fewer than train.batch_size=40: each epoch is a single step on all 12 of them',
    ]);
  });

  it('accumulation that asks for more batches than the items fill is warned about: those batches repeat items', () => {
    const w = preflight(sim(['train.batch_size=10', 'train.accumulation=4']), { train: 25, val: 5, test: 5 });
    assert.equal(w.length, 1);
    assert.match(
      w[0]!,
      /train\.accumulation=4 with train\.batch_size=10 asks for 4 batches per epoch, but the 25 training items fill only 3: the other 1 repeat items/,
    );
    assert.deepEqual(
      preflight(sim(['train.batch_size=10', 'train.accumulation=2']), { train: 40, val: 5, test: 5 }),
      [],
    );
  });

  it('empty splits and a pinned train_size that does not match are refused', () => {
    assert.throws(() => preflight(sim([]), { train: 0, val: 5, test: 5 }), /train split is empty/);
    assert.throws(() => preflight(sim([]), { train: 5, val: 0, test: 5 }), /val \(selection\) split is empty/);
    assert.throws(() => preflight(sim([]), { train: 5, val: 5, test: 0 }), /test split is empty/);
    assert.throws(
      () => preflight(sim(['train.train_size=50']), sizes),
      /train_size is 50 but the train split has 60 items/,
    );
  });

  it('train refuses a learning rate of 0 before any model call', async () => {
    const out = path.join(tmpDir(), 'run');
    let calls = 0;
    const counting: ChatModel = {
      id: 'counting',
      complete: async () => {
        calls++;
        throw new Error('no call should be made');
      },
    };
    const loaded = loadConfig(SIM_CONFIG, { environment: {}, overrides: ['optimizer.learning_rate=0'] });
    await assert.rejects(
      runTraining({
        loaded,
        outRoot: out,
        configFile: SIM_CONFIG,
        console: false,
        models: { target: counting, optimizer: counting },
      }),
      /optimizer\.learning_rate is 0/,
    );
    assert.equal(calls, 0);
    assert.equal(
      fs.existsSync(path.join(out, 'calls.jsonl')) ? fs.readFileSync(path.join(out, 'calls.jsonl'), 'utf8') : '',
      '',
    );
  });
});
