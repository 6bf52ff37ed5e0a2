import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { recognise } from '../../src/model/sim/world.ts';
import { readEvents } from '../../src/run/events.ts';
import { countTokens } from '../../src/skill/document.ts';
import { readText, trainSim } from '../helpers/train.ts';

describe('training on the simulator', () => {
  it('improves the default config from under 0.4 to over 0.85 on test, and leaves the reference layout', async () => {
    const { out, summary, history } = await trainSim();
    assert.ok((summary.baseline_test_hard as number) < 0.4, `baseline ${summary.baseline_test_hard}`);
    assert.ok((summary.test_hard as number) > 0.85, `best ${summary.test_hard}`);
    assert.equal(history.length, 9);
    for (const f of [
      'config.json',
      'history.json',
      'runtime_state.json',
      'best_skill.md',
      'summary.json',
      'events.jsonl',
      'calls.jsonl',
      'skills/skill_v0000.md',
      'skills/skill_v0009.md',
      'selection_eval_baseline/results.jsonl',
      'steps/step_0001/rollout/results.jsonl',
      'steps/step_0001/merged_patch.json',
      'steps/step_0001/ranked_edits.json',
      'steps/step_0001/candidate_skill.md',
      'steps/step_0001/edit_apply_report.json',
      'steps/step_0001/trajectory_digest.json',
      'steps/step_0001/step_record.json',
      'steps/step_0001/patches/minibatch_fail_000.json',
      'slow_update/epoch_01/slow_result.json',
      'slow_update/epoch_02/slow_result.json',
      'slow_update/epoch_02/comparison_pairs.json',
      'meta_skill/epoch_02/meta_skill_result.json',
      'test_eval_baseline/summary.json',
      'test_eval/summary.json',
      'test_eval_final/summary.json',
    ]) {
      assert.ok(fs.existsSync(path.join(out, f)), `${f} exists`);
    }
    const first = history[0]!;
    for (const k of [
      'rollout_hard',
      'n_edits_merged',
      'n_edits_ranked',
      'edit_budget',
      'candidate_hash',
      'selection_hard',
      'candidate_gate_score',
      'action',
      'current_score',
      'best_score',
    ]) {
      assert.ok(k in first, `history records have ${k}`);
    }
    assert.ok(
      first.tokens!.rollout!.calls > 0 && first.tokens!.analyst!.calls > 0,
      'tokens and calls per stage in each step record',
    );
    const stepRecord = JSON.parse(readText(path.join(out, 'steps/step_0001/step_record.json')));
    assert.ok(stepRecord.timing.rollout_s >= 0 && stepRecord.wall_time_s >= 0, 'timings in the step record');
    const runtime = JSON.parse(readText(path.join(out, 'runtime_state.json')));
    assert.equal(runtime.status, 'finished');
    assert.equal(runtime.last_completed_step, 9);
    const ts = summary.token_summary as Record<string, { calls: number }>;
    assert.equal(
      ts._total!.calls,
      Object.entries(ts)
        .filter(([k]) => k !== '_total')
        .reduce((n, [, v]) => n + v.calls, 0),
    );
    for (const stage of ['rollout', 'analyst', 'merge', 'slow_update', 'meta_skill'])
      assert.ok(ts[stage]!.calls > 0, `${stage} calls in the summary`);
    const events: string[] = readEvents(path.join(out, 'events.jsonl')).map((e) => e.type);
    for (const type of [
      'run_started',
      'stage_started',
      'stage_finished',
      'gate_decision',
      'step_finished',
      'epoch_boundary',
      'run_finished',
    ])
      assert.ok(events.includes(type), type);
    assert.ok((summary.selection_rollouts_saved as number) > 0, 'the gate saved selection rollouts');
  });

  it('is deterministic: two runs write identical history.json and best skills', async () => {
    const a = await trainSim();
    const b = await trainSim();
    assert.equal(readText(path.join(a.out, 'history.json')), readText(path.join(b.out, 'history.json')));
    assert.equal(readText(path.join(a.out, 'best_skill.md')), readText(path.join(b.out, 'best_skill.md')));
  });
});

describe('the mechanisms matter on the simulator', () => {
  it('without the gate, harmful edits get in and the run ends lower', async () => {
    const seeds = [42, 1, 2];
    let gatedSum = 0;
    let openSum = 0;
    let harmfulAccepted = 0;
    for (const seed of seeds) {
      const gated = await trainSim([`train.seed=${seed}`]);
      const open = await trainSim([`train.seed=${seed}`, 'evaluation.use_gate=false']);
      gatedSum += gated.summary.final_test_hard as number;
      openSum += open.summary.final_test_hard as number;
      assert.equal(
        recognise(readText(path.join(gated.out, 'best_skill.md'))).harmful.size,
        0,
        'the gate kept harmful directives out',
      );
      assert.ok(open.history.every((r) => r.action === 'force_accept' || r.action.startsWith('skip')));
      for (const r of open.history) {
        const cand = path.join(open.out, `steps/step_${String(r.step).padStart(4, '0')}/candidate_skill.md`);
        if (fs.existsSync(cand) && recognise(readText(cand)).harmful.size > 0) harmfulAccepted++;
      }
    }
    assert.ok(harmfulAccepted > 0, 'harmful directives were accepted without the gate');
    assert.ok(
      openSum < gatedSum,
      `mean final test without gate ${openSum / seeds.length} < with gate ${gatedSum / seeds.length}`,
    );
  });

  it('a learning rate of 1 learns more slowly per step than 4', async () => {
    const early = (h: { current_score?: number }[]) => h.slice(0, 3).reduce((s, r) => s + r.current_score!, 0);
    for (const seed of [42, 1]) {
      const slow = await trainSim([`train.seed=${seed}`, 'optimizer.learning_rate=1', 'optimizer.min_learning_rate=1']);
      const fast = await trainSim([
        `train.seed=${seed}`,
        'optimizer.learning_rate=4',
        'optimizer.lr_scheduler=constant',
      ]);
      assert.ok(slow.history.slice(0, 3).every((r) => (r.n_edits_ranked ?? 0) <= 1));
      assert.ok(
        early(slow.history) < early(fast.history),
        `seed ${seed}: first three steps ${early(slow.history)} < ${early(fast.history)}`,
      );
    }
  });

  it('an ever-growing skill is penalised, and max_skill_tokens caps the growth', async () => {
    const { SimEnv } = await import('../../src/envs/sim/env.ts');
    const { SimModel } = await import('../../src/model/sim/backend.ts');
    const { CONVENTIONS, IRRELEVANT } = await import('../../src/model/sim/rules.ts');
    const env = new SimEnv({ n_train: 10, n_val: 10, n_test: 120, noise: 0, data_seed: 7 });
    const target = new SimModel('sim-1', 42, 0, { harmful: 0, irrelevant: 0, vague: 0, blame: 0 });
    const { test } = await env.load();
    const rules = CONVENTIONS.map((c) => `- ${c.rules[0]}`).join('\n');
    const accuracy = async (skill: string) => {
      let hard = 0;
      for (const item of test) hard += (await env.rollout(item, skill, { target, seed: 1 })).hard;
      return hard / test.length;
    };
    const scores: number[] = [];
    for (const n of [0, 10, 25, 50]) {
      const filler = Array.from({ length: n }, (_, i) => `- ${IRRELEVANT[i % IRRELEVANT.length]} (note ${i})`).join(
        '\n',
      );
      scores.push(await accuracy(`${rules}\n${filler}`));
    }
    assert.equal(scores[0], 1, 'all rules, no filler: every answer right');
    for (let i = 1; i < scores.length; i++)
      assert.ok(scores[i]! < scores[i - 1]!, `longer is worse: ${scores.join(' > ')}`);

    const capped = await trainSim(['evaluation.use_gate=false', 'train.seed=1', 'optimizer.max_skill_tokens=220']);
    for (let v = 1; v <= 9; v++)
      assert.ok(
        countTokens(readText(path.join(capped.out, `skills/skill_v000${v}.md`))) <= 220,
        `version ${v} within the cap`,
      );
    const reports = capped.history.flatMap((r) => {
      const f = path.join(capped.out, `steps/step_${String(r.step).padStart(4, '0')}/edit_apply_report.json`);
      return fs.existsSync(f) ? (JSON.parse(readText(f)) as { status: string }[]) : [];
    });
    assert.ok(
      reports.some((r) => r.status === 'skipped_length_limit'),
      'edits were refused for length',
    );
  });
});
