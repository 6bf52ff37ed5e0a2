/** The dashboard's read API on the fixture runs: what each endpoint serves of a run. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FIXTURES, apiClient, queryString } from './helpers.ts';

type Json = any;

describe('dashboard API on the fixture runs', () => {
  const get = apiClient([FIXTURES]);

  it('lists every run with env, models, status, progress, scores, tokens and cost', async () => {
    const { status, body } = await get('/api/runs');
    assert.equal(status, 200);
    const ids = body.runs.map((r: Json) => r.id).sort();
    assert.deepEqual(ids, ['0/finished-run', '0/python-searchqa']);
    const run = body.runs.find((r: Json) => r.id === '0/finished-run');
    assert.equal(run.env, 'tasks');
    assert.equal(run.target, 'gpt-5.4-mini (openai_chat)');
    assert.equal(run.optimizer, 'gpt-5.5 (openai_chat)');
    assert.equal(run.status, 'finished');
    assert.deepEqual([run.progress.completedSteps, run.progress.totalSteps, run.progress.epochs], [6, 6, 2]);
    assert.equal(run.bestScore, 0.8333);
    assert.equal(run.bestStep, 4);
    assert.deepEqual(run.test, { baseline: 0.3333, best: 0.75, final: 0.8333 });
    // The totals are those of the call ledger, counted here independently.
    const calls = fs
      .readFileSync(path.join(FIXTURES, 'finished-run/calls.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    assert.equal(run.usage.source, 'calls');
    assert.equal(run.usage.calls, calls.length);
    assert.equal(
      run.usage.promptTokens,
      calls.reduce((a, c) => a + c.usage.input, 0),
    );
    assert.ok(Math.abs(run.usage.costUsd - calls.reduce((a, c) => a + c.cost_usd, 0)) < 1e-9);
    assert.deepEqual(run.problems, []);
  });

  it('gives a run the epochs, the final test table per task type and the usage per purpose', async () => {
    const { body } = await get(`/api/run?${queryString({ run: '0/finished-run' })}`);
    assert.equal(body.baselineSelection, 0.3333);
    assert.deepEqual(
      body.epochs.map((e: Json) => [e.epoch, e.lastStep, e.slowUpdate?.action, e.metaSkill?.action]),
      [
        [1, 3, 'inject_placeholder', 'skip_first_epoch'],
        [2, 6, 'force_accept', 'write_meta_skill'],
      ],
    );
    const overall = body.tests.find((t: Json) => t.type === 'overall');
    assert.deepEqual(
      [overall.baseline.hard_acc, overall.best.hard_acc, overall.final.hard_acc],
      [0.3333, 0.75, 0.8333],
    );
    assert.equal(body.tests.at(-1).type, 'overall');
    assert.deepEqual(Object.keys(body.usageByStage).sort(), [
      'analyst',
      'merge',
      'meta_skill',
      'ranking',
      'rollout',
      'slow_update',
    ]);
    assert.equal(body.config.config.env.name, 'tasks');
    assert.equal(body.config.derived.total_steps, 6);
    assert.deepEqual(
      [body.taskCost.initial.usd, body.taskCost.best.usd, body.taskCost.gain.usd_per_point],
      [0.00013, 0.00021, 0.01008],
    );
  });

  it('returns step records after a given step only', async () => {
    const all = await get(`/api/history?${queryString({ run: '0/finished-run' })}`);
    assert.deepEqual(
      all.body.rows.map((r: Json) => r.step),
      [1, 2, 3, 4, 5, 6],
    );
    const later = await get(`/api/history?${queryString({ run: '0/finished-run', since: 4 })}`);
    assert.deepEqual(
      later.body.rows.map((r: Json) => [r.step, r.action]),
      [
        [5, 'reject'],
        [6, 'reject'],
      ],
    );
    // history.json has no wall-clock times (it is reproducible): they come from the event log.
    assert.equal(
      JSON.parse(fs.readFileSync(path.join(FIXTURES, 'finished-run/history.json'), 'utf8'))[4].timing,
      undefined,
    );
    assert.deepEqual(Object.keys(later.body.rows[0].timing), [
      'rollout_s',
      'reflect_s',
      'aggregate_s',
      'select_s',
      'update_s',
      'evaluate_s',
    ]);
    assert.equal(later.body.rows[0].wall_time_s, 6.5);
  });

  it('shows each ranked edit applied or skipped with the reason, and the merged edits the budget left out', async () => {
    const { body } = await get(`/api/step?${queryString({ run: '0/finished-run', step: 1 })}`);
    assert.deepEqual(
      body.edits.map((e: Json) => [e.index, e.op, e.applied, e.status]),
      [
        [1, 'insert_after', true, 'applied_insert_after'],
        [2, 'append', true, 'applied_append'],
        [3, 'replace', false, 'skipped_replace_target_not_found'],
      ],
    );
    assert.equal(body.edits[2].reason, 'the target text is not in the skill');
    assert.deepEqual(
      body.notSelected.map((e: Json) => [e.content, e.status]),
      [['- Format numbers nicely.', 'not_selected']],
    );
    assert.match(body.notSelected[0].reason, /edit budget \(3\)/);
    assert.deepEqual(body.diff, { a: 'v:0', b: 'cand:1' });
    assert.equal(body.record.timing.reflect_s, 2.1, 'wall-clock times from step_record.json');
    assert.equal(body.gate.action, 'accept_new_best');
    assert.equal(body.gate.before, 0.3333, 'the score the gate compared with comes from the event log');
    assert.deepEqual(
      body.rollouts.map((r: Json) => [r.dir, r.count]),
      [
        ['steps/step_0001/rollout', 6],
        ['steps/step_0001/selection_eval', 6],
      ],
    );
  });

  it('shows a rejected step with the scores that rejected its edits', async () => {
    const { body } = await get(`/api/step?${queryString({ run: '0/finished-run', step: 5 })}`);
    assert.equal(body.gate.action, 'reject');
    assert.deepEqual([body.gate.candidate, body.gate.atMost], [0.6667, undefined]);
    assert.deepEqual([body.rejected.scoreBefore, body.rejected.scoreAfter], [0.8333, 0.6667]);
    assert.equal(body.rejected.edits.length, 2);
    assert.match(body.rejected.edits[1].content, /Spell out every number/);
  });

  it('gives the bound of a candidate rejected by a gate that stopped early', async () => {
    const { body } = await get(`/api/step?${queryString({ run: '0/finished-run', step: 2 })}`);
    assert.equal(body.gate.action, 'reject');
    // The engine records no candidate score then, only the bound, and the rollouts it took.
    assert.deepEqual([body.gate.candidate, body.gate.atMost, body.gate.before], [null, 0.5, 0.5]);
    assert.deepEqual(
      [body.record.gate.rollouts_used, body.record.gate.rollouts_saved, body.record.gate.early_stopped],
      [3, 3, true],
    );
    assert.deepEqual(
      [body.rejected.scoreBefore, body.rejected.scoreAfter, body.rejected.scoreAfterAtMost],
      [0.5, undefined, 0.5],
    );
    assert.match(body.rejected.edits[0].content, /upper case/);
    const { body: history } = await get(`/api/history?${queryString({ run: '0/finished-run' })}`);
    const row = history.rows.find((r: Json) => r.step === 2);
    assert.deepEqual(
      [row.candidate_gate_score, row.candidate_gate_upper_bound],
      [null, 0.5],
      'the chart gets the bound',
    );
  });

  it('diffs the candidate against the current skill: applied edits added, skipped ones absent', async () => {
    const { body: diff } = await get(`/api/diff?${queryString({ run: '0/finished-run', a: 'v:0', b: 'cand:1' })}`);
    const added = diff.lines.filter((l: Json) => l.t === '+').map((l: Json) => l.text);
    assert.deepEqual(added, [
      '- Write amounts and measurements with exactly two decimals (12.50, not 12.5).',
      '- Never use thousands separators: write 12345, not 12,345.',
    ]);
    assert.equal(diff.removed, 0);
    assert.ok(
      !diff.lines.some((l: Json) => l.text.includes('in the house format')),
      'the skipped replace is not in the candidate',
    );
    const { body: versions } = await get(`/api/skills?${queryString({ run: '0/finished-run' })}`);
    const refs = versions.versions.map((v: Json) => v.ref);
    assert.ok(['v:0', 'v:6', 'best', 'cand:1', 'slow:2'].every((r) => refs.includes(r)));
    assert.ok(!refs.includes('cand:3'), 'a skipped step has no candidate');
    const { status, body: bad } = await get(
      `/api/diff?${queryString({ run: '0/finished-run', a: 'v:0', b: '../../etc/passwd' })}`,
    );
    assert.equal(status, 400);
    assert.match(bad.error, /not a skill reference/);
  });

  it('pages trajectories filtered by outcome, type and text, and opens one with its conversation', async () => {
    const dir = 'steps/step_0001/rollout';
    const page = await get(
      `/api/trajectories?${queryString({ run: '0/finished-run', dir, outcome: 'fail', limit: 2 })}`,
    );
    assert.equal(page.status, 200);
    assert.deepEqual(page.body.counts, { pass: 1, fail: 5, error: 0 });
    assert.equal(page.body.matched, 5);
    assert.deepEqual(
      page.body.rows.map((r: Json) => r.id),
      ['q07', 'q08'],
    );
    const next = await get(
      `/api/trajectories?${queryString({ run: '0/finished-run', dir, outcome: 'fail', limit: 2, offset: 4 })}`,
    );
    assert.deepEqual(
      next.body.rows.map((r: Json) => r.id),
      ['q11'],
    );
    const byType = await get(`/api/trajectories?${queryString({ run: '0/finished-run', dir, type: 'measurement' })}`);
    assert.deepEqual(
      byType.body.rows.map((r: Json) => [r.id, r.outcome]),
      [
        ['q08', 'fail'],
        ['q12', 'pass'],
      ],
    );
    const search = await get(`/api/trajectories?${queryString({ run: '0/finished-run', dir, q: 'forklift' })}`);
    assert.deepEqual(
      search.body.rows.map((r: Json) => r.id),
      ['q07'],
    );
    const one = await get(`/api/trajectory?${queryString({ run: '0/finished-run', dir, n: 0 })}`);
    assert.equal(one.body.result.expected, '31800.00');
    assert.equal(one.body.result.predicted_answer, '$31,800');
    assert.match(one.body.result.feedback, /house format/);
    assert.deepEqual(
      one.body.conversation.map((m: Json) => m.role),
      ['system', 'user', 'assistant'],
    );
    const badOutcome = await get(`/api/trajectories?${queryString({ run: '0/finished-run', dir, outcome: 'maybe' })}`);
    assert.equal(badOutcome.status, 400);
  });

  it('says what each step, slow update and step page decided, so the page reads no action spellings', async () => {
    const { body: history } = await get(`/api/history?${queryString({ run: '0/finished-run' })}`);
    assert.deepEqual(
      history.rows.map((r: Json) => [r.action, r.decision.outcome, r.decision.kind, r.decision.newBest]),
      history.rows.map((r: Json) => [
        r.action,
        r.action.startsWith('accept') || r.action === 'force_accept'
          ? 'accepted'
          : r.action === 'reject'
            ? 'rejected'
            : 'skipped',
        r.action,
        r.action === 'accept_new_best',
      ]),
    );
    assert.deepEqual(
      new Set(history.rows.map((r: Json) => r.decision.outcome)),
      new Set(['accepted', 'rejected', 'skipped']),
    );
    const { body: run } = await get(`/api/run?${queryString({ run: '0/finished-run' })}`);
    assert.deepEqual(
      run.epochs.map((e: Json) => e.slowUpdate?.decision),
      [
        { outcome: 'other', kind: 'inject_placeholder', newBest: false, forced: false },
        { outcome: 'accepted', kind: 'force_accept', newBest: false, forced: true },
      ],
    );
    assert.equal(run.pool, false, 'a run without a candidate pool');
    const { body: step } = await get(`/api/step?${queryString({ run: '0/finished-run', step: 5 })}`);
    assert.deepEqual(step.gate.decision, { outcome: 'rejected', kind: 'reject', newBest: false, forced: false });
    const { body: python } = await get(`/api/step?${queryString({ run: '0/python-searchqa', step: 2 })}`);
    assert.equal(python.gate.decision.outcome, 'rejected');
  });

  it('reads a run directory of the original Python SkillOpt', async () => {
    const { body } = await get(`/api/run?${queryString({ run: '0/python-searchqa' })}`);
    assert.equal(body.layout, 'python');
    assert.equal(body.env, 'searchqa');
    assert.equal(body.target, 'gpt-5.4-nano (openai_chat)');
    assert.equal(body.status, 'finished');
    assert.deepEqual([body.progress.completedSteps, body.progress.totalSteps], [3, 3]);
    assert.deepEqual(body.test, { baseline: 0.61, best: 0.68, final: 0.68 });
    assert.equal(body.usage.source, 'summary');
    assert.equal(body.usage.calls, 582);
    assert.equal(body.usage.unpricedCalls, 582, 'the original records no prices');
    assert.deepEqual(body.problems, []);
    const step = await get(`/api/step?${queryString({ run: '0/python-searchqa', step: 2 })}`);
    assert.equal(step.body.gate.action, 'reject');
    assert.deepEqual([step.body.rejected.scoreBefore, step.body.rejected.scoreAfter], [0.6, 0.5]);
    assert.equal(step.body.gate.before, 0.6, 'without an event log the previous record gives the score before');
    const traj = await get(
      `/api/trajectory?${queryString({ run: '0/python-searchqa', dir: 'steps/step_0001/rollout', n: 0 })}`,
    );
    assert.equal(traj.body.result.question.startsWith('Which river'), true);
    assert.deepEqual(
      traj.body.conversation.map((m: Json) => m.type ?? m.role),
      ['message', 'system'],
    );
    assert.deepEqual(traj.body.files, ['conversation.json', 'target_system_prompt.txt', 'target_user_prompt.txt']);
  });

  it("shows the expected answer of the original's SearchQA (gold_answers) and its missing task type", async () => {
    const dir = 'steps/step_0001/rollout';
    const page = await get(`/api/trajectories?${queryString({ run: '0/python-searchqa', dir })}`);
    const first = page.body.rows[0];
    assert.deepEqual([first.id, first.expected, first.predicted, first.type], ['sq-101', 'thames', 'London', '']);
    assert.deepEqual(page.body.types, { '': 10 });
    const untyped = await get(`/api/trajectories?${queryString({ run: '0/python-searchqa', dir, type: '-' })}`);
    assert.equal(untyped.body.matched, 10, 'type=- selects the results without a task type');
    const byAnswer = await get(
      `/api/trajectories?${queryString({ run: '0/python-searchqa', dir, q: 'philip k dick' })}`,
    );
    assert.deepEqual(
      byAnswer.body.rows.map((r: Json) => r.id),
      ['sq-102'],
    );
    const one = await get(`/api/trajectory?${queryString({ run: '0/python-searchqa', dir, n: 1 })}`);
    assert.deepEqual([one.body.expected, one.body.type], ['philip k dick', '']);
    // Several gold answers are shown one after the other; ours keep `expected`.
    const ours = await get(`/api/trajectory?${queryString({ run: '0/finished-run', dir, n: 0 })}`);
    assert.deepEqual([ours.body.expected, ours.body.type], ['31800.00', 'money']);
  });

  it('answers a missing run, a missing step and bad parameters with a clear message', async () => {
    const missing = await get(`/api/run?${queryString({ run: '0/no-such-run' })}`);
    assert.equal(missing.status, 404);
    assert.match(missing.body.error, /run not found: 0\/no-such-run/);
    const noRoot = await get(`/api/run?${queryString({ run: '7/x' })}`);
    assert.equal(noRoot.status, 404);
    assert.match(noRoot.body.error, /no run root number 7/);
    const noParam = await get('/api/run');
    assert.equal(noParam.status, 400);
    const step = await get(`/api/step?${queryString({ run: '0/finished-run', step: 99 })}`);
    assert.equal(step.status, 200);
    assert.equal(step.body.record, undefined);
    const badStep = await get(`/api/step?${queryString({ run: '0/finished-run', step: 'one' })}`);
    assert.equal(badStep.status, 400);
    assert.match(badStep.body.error, /step must be a whole number/);
    const nothing = await get('/api/nothing');
    assert.equal(nothing.status, 404);
  });
});
