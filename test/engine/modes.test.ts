import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readText, trainSim } from '../helpers/train.ts';
import { APPENDIX_START, SLOW_UPDATE_START } from '../../src/skill/regions.ts';

const exists = (out: string, rel: string) => fs.existsSync(path.join(out, rel));
const json = (out: string, rel: string) => JSON.parse(readText(path.join(out, rel)));

describe('update modes and options train on the simulator', () => {
  it('rewrite_from_suggestions: suggestions, a rewrite call, the protected field kept', async () => {
    const r = await trainSim(['optimizer.skill_update_mode=rewrite']);
    assert.ok(
      (r.summary.test_hard as number) > (r.summary.baseline_test_hard as number) + 0.3,
      `${r.summary.baseline_test_hard} -> ${r.summary.test_hard}`,
    );
    assert.ok(r.history.some((h) => h.action.startsWith('accept')));
    assert.ok(json(r.out, 'steps/step_0001/merged_patch.json').revise_suggestions.length > 0);
    assert.ok(exists(r.out, 'steps/step_0001/rewrite_result.json'));
    assert.ok((r.summary.token_summary as Record<string, { calls: number }>).rewrite!.calls > 0);
    assert.ok(readText(path.join(r.out, 'skills/skill_v0009.md')).includes(SLOW_UPDATE_START));
  });

  it('full_rewrite_minibatch: whole candidates, no learning rate', async () => {
    const r = await trainSim(['optimizer.skill_update_mode=full_rewrite']);
    assert.ok((r.summary.test_hard as number) > (r.summary.baseline_test_hard as number) + 0.3);
    assert.ok(r.history.every((h) => h.edit_budget === null || h.edit_budget === undefined));
    assert.ok(r.history.every((h) => h.action.startsWith('skip') || h.lr_control_mode === 'none'));
    assert.ok(json(r.out, 'steps/step_0001/merged_patch.json').skill_candidates.length >= 1);
  });

  it('autonomous learning rate: the optimizer decides, recorded per step', async () => {
    const r = await trainSim(['optimizer.lr_control_mode=autonomous']);
    assert.ok((r.summary.test_hard as number) > 0.85);
    assert.ok(exists(r.out, 'steps/step_0001/lr_decision.json'));
    const lines = readText(path.join(r.out, 'lr_history.jsonl'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.ok(lines.length >= 1 && lines.every((l) => typeof l.learning_rate === 'number' && l.step >= 1));
    assert.ok((r.summary.token_summary as Record<string, { calls: number }>).lr_autonomous!.calls > 0);
  });

  it('skill-aware reflection: lapses go to the protected appendix', async () => {
    const r = await trainSim(['optimizer.use_skill_aware_reflection=true', 'train.seed=1']);
    const final = readText(path.join(r.out, 'skills/skill_v0009.md'));
    assert.ok(final.includes(APPENDIX_START), 'the appendix region exists');
    // Well above the initial skill's 0.17 on the test split.
    assert.ok((r.summary.test_hard as number) > 0.75, `test_hard ${String(r.summary.test_hard)}`);
  });

  it('accumulation, a gated slow update and the changed-pairs policy', async () => {
    const r = await trainSim([
      'train.accumulation=2',
      'train.batch_size=10',
      'optimizer.slow_update_gate_with_selection=true',
      'optimizer.longitudinal_pair_policy=changed',
    ]);
    assert.ok(
      exists(r.out, 'steps/step_0001/batch_0/rollout/results.jsonl') &&
        exists(r.out, 'steps/step_0001/batch_1/rollout/results.jsonl'),
    );
    assert.equal((r.history[0]!.accumulation_batches as unknown[]).length, 2);
    assert.ok(exists(r.out, 'slow_update/epoch_02/comparison_pairs_all.json'));
    const slow = json(r.out, 'slow_update/epoch_02/slow_result.json');
    assert.ok(['accept', 'accept_new_best', 'reject', 'no_content'].includes(slow.action), slow.action);
    assert.ok((r.summary.test_hard as number) > 0.85);
  });
});
