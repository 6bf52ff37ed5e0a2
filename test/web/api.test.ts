import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createDashboardApp } from '../../src/web/server/app.ts';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { FIXTURES, copyFixture, finishStep, rewindToRunning } from './helpers.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function client(roots: string[]) {
  const { app } = createDashboardApp({ roots });
  return async (url: string): Promise<{ status: number; body: Json }> => {
    const res = await app.request(url);
    return { status: res.status, body: await res.json() };
  };
}

const q = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

describe('dashboard API on the fixture runs', () => {
  const get = client([FIXTURES]);

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
    const { body } = await get(`/api/run?${q({ run: '0/finished-run' })}`);
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
  });

  it('returns step records after a given step only', async () => {
    const all = await get(`/api/history?${q({ run: '0/finished-run' })}`);
    assert.deepEqual(
      all.body.rows.map((r: Json) => r.step),
      [1, 2, 3, 4, 5, 6],
    );
    const later = await get(`/api/history?${q({ run: '0/finished-run', since: 4 })}`);
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
    const { body } = await get(`/api/step?${q({ run: '0/finished-run', step: 1 })}`);
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
    const { body } = await get(`/api/step?${q({ run: '0/finished-run', step: 5 })}`);
    assert.equal(body.gate.action, 'reject');
    assert.deepEqual([body.gate.candidate, body.gate.atMost], [0.6667, undefined]);
    assert.deepEqual([body.rejected.scoreBefore, body.rejected.scoreAfter], [0.8333, 0.6667]);
    assert.equal(body.rejected.edits.length, 2);
    assert.match(body.rejected.edits[1].content, /Spell out every number/);
  });

  it('gives the bound of a candidate rejected by a gate that stopped early', async () => {
    const { body } = await get(`/api/step?${q({ run: '0/finished-run', step: 2 })}`);
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
    const { body: history } = await get(`/api/history?${q({ run: '0/finished-run' })}`);
    const row = history.rows.find((r: Json) => r.step === 2);
    assert.deepEqual(
      [row.candidate_gate_score, row.candidate_gate_upper_bound],
      [null, 0.5],
      'the chart gets the bound',
    );
  });

  it('diffs the candidate against the current skill: applied edits added, skipped ones absent', async () => {
    const { body: diff } = await get(`/api/diff?${q({ run: '0/finished-run', a: 'v:0', b: 'cand:1' })}`);
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
    const { body: versions } = await get(`/api/skills?${q({ run: '0/finished-run' })}`);
    const refs = versions.versions.map((v: Json) => v.ref);
    assert.ok(['v:0', 'v:6', 'best', 'cand:1', 'slow:2'].every((r) => refs.includes(r)));
    assert.ok(!refs.includes('cand:3'), 'a skipped step has no candidate');
    const { status, body: bad } = await get(
      `/api/diff?${q({ run: '0/finished-run', a: 'v:0', b: '../../etc/passwd' })}`,
    );
    assert.equal(status, 400);
    assert.match(bad.error, /not a skill reference/);
  });

  it('pages trajectories filtered by outcome, type and text, and opens one with its conversation', async () => {
    const dir = 'steps/step_0001/rollout';
    const page = await get(`/api/trajectories?${q({ run: '0/finished-run', dir, outcome: 'fail', limit: 2 })}`);
    assert.equal(page.status, 200);
    assert.deepEqual(page.body.counts, { pass: 1, fail: 5, error: 0 });
    assert.equal(page.body.matched, 5);
    assert.deepEqual(
      page.body.rows.map((r: Json) => r.id),
      ['q07', 'q08'],
    );
    const next = await get(
      `/api/trajectories?${q({ run: '0/finished-run', dir, outcome: 'fail', limit: 2, offset: 4 })}`,
    );
    assert.deepEqual(
      next.body.rows.map((r: Json) => r.id),
      ['q11'],
    );
    const byType = await get(`/api/trajectories?${q({ run: '0/finished-run', dir, type: 'measurement' })}`);
    assert.deepEqual(
      byType.body.rows.map((r: Json) => [r.id, r.outcome]),
      [
        ['q08', 'fail'],
        ['q12', 'pass'],
      ],
    );
    const search = await get(`/api/trajectories?${q({ run: '0/finished-run', dir, q: 'forklift' })}`);
    assert.deepEqual(
      search.body.rows.map((r: Json) => r.id),
      ['q07'],
    );
    const one = await get(`/api/trajectory?${q({ run: '0/finished-run', dir, n: 0 })}`);
    assert.equal(one.body.result.expected, '31800.00');
    assert.equal(one.body.result.predicted_answer, '$31,800');
    assert.match(one.body.result.feedback, /house format/);
    assert.deepEqual(
      one.body.conversation.map((m: Json) => m.role),
      ['system', 'user', 'assistant'],
    );
    const badOutcome = await get(`/api/trajectories?${q({ run: '0/finished-run', dir, outcome: 'maybe' })}`);
    assert.equal(badOutcome.status, 400);
  });

  it('says what each step, slow update and step page decided, so the page reads no action spellings', async () => {
    const { body: history } = await get(`/api/history?${q({ run: '0/finished-run' })}`);
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
    const { body: run } = await get(`/api/run?${q({ run: '0/finished-run' })}`);
    assert.deepEqual(
      run.epochs.map((e: Json) => e.slowUpdate?.decision),
      [
        { outcome: 'other', kind: 'inject_placeholder', newBest: false, forced: false },
        { outcome: 'accepted', kind: 'force_accept', newBest: false, forced: true },
      ],
    );
    assert.equal(run.pool, false, 'a run without a candidate pool');
    const { body: step } = await get(`/api/step?${q({ run: '0/finished-run', step: 5 })}`);
    assert.deepEqual(step.gate.decision, { outcome: 'rejected', kind: 'reject', newBest: false, forced: false });
    const { body: python } = await get(`/api/step?${q({ run: '0/python-searchqa', step: 2 })}`);
    assert.equal(python.gate.decision.outcome, 'rejected');
  });

  it('reads a run directory of the original Python SkillOpt', async () => {
    const { body } = await get(`/api/run?${q({ run: '0/python-searchqa' })}`);
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
    const step = await get(`/api/step?${q({ run: '0/python-searchqa', step: 2 })}`);
    assert.equal(step.body.gate.action, 'reject');
    assert.deepEqual([step.body.rejected.scoreBefore, step.body.rejected.scoreAfter], [0.6, 0.5]);
    assert.equal(step.body.gate.before, 0.6, 'without an event log the previous record gives the score before');
    const traj = await get(`/api/trajectory?${q({ run: '0/python-searchqa', dir: 'steps/step_0001/rollout', n: 0 })}`);
    assert.equal(traj.body.result.question.startsWith('Which river'), true);
    assert.deepEqual(
      traj.body.conversation.map((m: Json) => m.type ?? m.role),
      ['message', 'system'],
    );
    assert.deepEqual(traj.body.files, ['conversation.json', 'target_system_prompt.txt', 'target_user_prompt.txt']);
  });

  it("shows the expected answer of the original's SearchQA (gold_answers) and its missing task type", async () => {
    const dir = 'steps/step_0001/rollout';
    const page = await get(`/api/trajectories?${q({ run: '0/python-searchqa', dir })}`);
    const first = page.body.rows[0];
    assert.deepEqual([first.id, first.expected, first.predicted, first.type], ['sq-101', 'thames', 'London', '']);
    assert.deepEqual(page.body.types, { '': 10 });
    const untyped = await get(`/api/trajectories?${q({ run: '0/python-searchqa', dir, type: '-' })}`);
    assert.equal(untyped.body.matched, 10, 'type=- selects the results without a task type');
    const byAnswer = await get(`/api/trajectories?${q({ run: '0/python-searchqa', dir, q: 'philip k dick' })}`);
    assert.deepEqual(
      byAnswer.body.rows.map((r: Json) => r.id),
      ['sq-102'],
    );
    const one = await get(`/api/trajectory?${q({ run: '0/python-searchqa', dir, n: 1 })}`);
    assert.deepEqual([one.body.expected, one.body.type], ['philip k dick', '']);
    // Several gold answers are shown one after the other; ours keep `expected`.
    const ours = await get(`/api/trajectory?${q({ run: '0/finished-run', dir, n: 0 })}`);
    assert.deepEqual([ours.body.expected, ours.body.type], ['31800.00', 'money']);
  });

  it('answers a missing run, a missing step and bad parameters with a clear message', async () => {
    const missing = await get(`/api/run?${q({ run: '0/no-such-run' })}`);
    assert.equal(missing.status, 404);
    assert.match(missing.body.error, /run not found: 0\/no-such-run/);
    const noRoot = await get(`/api/run?${q({ run: '7/x' })}`);
    assert.equal(noRoot.status, 404);
    assert.match(noRoot.body.error, /no run root number 7/);
    const noParam = await get('/api/run');
    assert.equal(noParam.status, 400);
    const step = await get(`/api/step?${q({ run: '0/finished-run', step: 99 })}`);
    assert.equal(step.status, 200);
    assert.equal(step.body.record, undefined);
    const badStep = await get(`/api/step?${q({ run: '0/finished-run', step: 'one' })}`);
    assert.equal(badStep.status, 400);
    assert.match(badStep.body.error, /step must be a whole number/);
    const nothing = await get('/api/nothing');
    assert.equal(nothing.status, 404);
  });
});

describe('dashboard API refuses paths outside the run roots', () => {
  const { root, dir } = copyFixture('finished-run', 'run');
  const outside = tmpDir('skillopt-outside-');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'not for the dashboard');
  fs.writeFileSync(path.join(outside, 'history.json'), '[]');
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'leak.txt'));
  fs.symlinkSync(outside, path.join(dir, 'steps', 'step_0009'));
  fs.symlinkSync(outside, path.join(root, 'linked-run'));
  fs.writeFileSync(path.join(dir, '.env'), 'OPENAI_API_KEY=sk-test');
  const get = client([root]);

  for (const [label, url] of [
    ['a run id that climbs', `/api/run?${q({ run: '0/../..' })}`],
    ['a run id that climbs inside a path', `/api/run?${q({ run: '0/run/../../..' })}`],
    ['an absolute run id', `/api/run?${q({ run: '0//etc' })}`],
    ['a file path that climbs', `/api/file?${q({ run: '0/run', path: '../../../etc/passwd' })}`],
    ['an absolute file path', `/api/file?${q({ run: '0/run', path: '/etc/passwd' })}`],
    ['a hidden file', `/api/file?${q({ run: '0/run', path: '.env' })}`],
    ['a symlink to a file outside', `/api/file?${q({ run: '0/run', path: 'leak.txt' })}`],
    ['a rollout directory that climbs', `/api/trajectories?${q({ run: '0/run', dir: '../..' })}`],
    ['a rollout directory through a symlink out', `/api/trajectories?${q({ run: '0/run', dir: 'steps/step_0009' })}`],
    ['a run reached through a symlink out of the root', `/api/run?${q({ run: '0/linked-run' })}`],
    ['a backslash climb', `/api/file?${q({ run: '0/run', path: '..\\..\\etc\\passwd' })}`],
  ] as const) {
    it(`refuses ${label}`, async () => {
      const { status, body } = await get(url);
      assert.ok(status === 403 || status === 400, `${url} answered ${status}: ${JSON.stringify(body)}`);
      assert.ok(!JSON.stringify(body).includes('not for the dashboard') && !JSON.stringify(body).includes('sk-test'));
    });
  }

  it('does not list runs reached through a symlink', async () => {
    const { body } = await get('/api/runs');
    assert.deepEqual(
      body.runs.map((r: Json) => r.id),
      ['0/run'],
    );
  });

  it('serves only text files of the run', async () => {
    const ok = await get(`/api/file?${q({ run: '0/run', path: 'steps/step_0001/merged_patch.json' })}`);
    assert.equal(ok.status, 200);
    assert.match(ok.body.text, /Format numbers nicely/);
    fs.writeFileSync(path.join(dir, 'run.bin'), 'x');
    const bin = await get(`/api/file?${q({ run: '0/run', path: 'run.bin' })}`);
    assert.equal(bin.status, 403);
  });

  describe('over real HTTP', () => {
    let dash: RunningDashboard;
    before(async () => {
      dash = await startDashboard({ roots: [root], host: '127.0.0.1', port: 0 });
    });
    after(() => dash.close());

    const raw = (pathname: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: dash.port, path: pathname, headers }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });

    it('never answers a raw path outside the page with a file', async () => {
      for (const p of [
        '/../../../../etc/passwd',
        '/%2e%2e/%2e%2e/etc/passwd',
        '/vendor/../../../.env',
        '/static/..%2f..%2f.env',
        '/app.js/../../.env',
      ]) {
        const res = await raw(p);
        assert.ok(
          !res.body.includes('root:') && !res.body.includes('sk-test'),
          `${p} leaked: ${res.body.slice(0, 80)}`,
        );
        assert.notEqual(res.status, 500);
      }
    });

    it('refuses requests addressed to another host name (DNS rebinding)', async () => {
      const res = await raw('/api/runs', { Host: `attacker.example:${dash.port}` });
      assert.equal(res.status, 403);
      const ok = await raw('/api/runs', { Host: `localhost:${dash.port}` });
      assert.equal(ok.status, 200);
    });

    it('serves uPlot from the package, not from a CDN', async () => {
      const page = await raw('/');
      assert.match(page.body, /src="\/vendor\/uplot.js"/);
      assert.ok(
        !/https?:\/\//.test(page.body.replace(/<!doctype[^>]*>/i, '')),
        'the page loads nothing from the network',
      );
      const lib = await raw('/vendor/uplot.js');
      assert.equal(lib.status, 200);
      assert.match(lib.body, /uPlot/);
    });
  });
});

describe('dashboard API on broken and unfinished runs', () => {
  it('reports a corrupt history.json in words and keeps serving the run', async () => {
    const { root, dir } = copyFixture('finished-run', 'broken');
    fs.writeFileSync(path.join(dir, 'history.json'), '[{"step": 1, "epoch": 1, "action": "accept"}, {"step": 2,');
    const get = client([root]);
    const list = await get('/api/runs');
    assert.equal(list.status, 200);
    const row = list.body.runs[0];
    assert.equal(row.problems.length, 1);
    assert.match(row.problems[0], /history\.json is not valid JSON .*expected a list of step records/);
    const run = await get(`/api/run?${q({ run: '0/broken' })}`);
    assert.equal(run.status, 200);
    assert.match(run.body.problems[0], /history\.json/);
    const history = await get(`/api/history?${q({ run: '0/broken' })}`);
    assert.equal(history.status, 200);
    assert.deepEqual(history.body.rows, []);
    assert.match(history.body.problems[0], /not valid JSON/);
  });

  it('names a broken test summary and still shows the others', async () => {
    const { root, dir } = copyFixture('finished-run', 'badtest');
    fs.writeFileSync(path.join(dir, 'test_eval_final/summary.json'), '{"overall": {"total": "many"}}');
    const { status, body } = await client([root])(`/api/run?${q({ run: '0/badtest' })}`);
    assert.equal(status, 200);
    assert.match(
      body.problems.join('\n'),
      /test_eval_final\/summary\.json is not test results per task type .*: .* at overall\.total/,
    );
    const overall = body.tests.find((t: Json) => t.type === 'overall');
    assert.deepEqual([overall.baseline.hard_acc, overall.best.hard_acc, overall.final], [0.3333, 0.75, undefined]);
  });

  it('leaves out a step record that does not read, and names it', async () => {
    const { root, dir } = copyFixture('finished-run', 'odd');
    const history = JSON.parse(fs.readFileSync(path.join(dir, 'history.json'), 'utf8'));
    delete history[1].action;
    history[2].step = 'three';
    fs.writeFileSync(path.join(dir, 'history.json'), JSON.stringify(history));
    const get = client([root]);
    const { body } = await get(`/api/history?${q({ run: '0/odd' })}`);
    assert.deepEqual(
      body.rows.map((r: Json) => r.step),
      [1, 4, 5, 6],
    );
    assert.equal(body.problems.length, 2);
    assert.match(body.problems[0], /record 2 is not a step record \(action: /);
    assert.match(body.problems[1], /record 3 is not a step record \(step: /);
  });

  it('reads an empty or half-written results file and a broken events line without failing', async () => {
    const { root, dir } = copyFixture('finished-run', 'torn');
    fs.appendFileSync(
      path.join(dir, 'events.jsonl'),
      'not json\n{"type":"log","time":"x","level":"info","message":"half',
    );
    fs.appendFileSync(path.join(dir, 'steps/step_0001/rollout/results.jsonl'), '{"id":"q99","hard":');
    const get = client([root]);
    const run = await get(`/api/run?${q({ run: '0/torn' })}`);
    assert.equal(run.status, 200);
    assert.match(run.body.problems.join('\n'), /1 line\(s\) are not events/);
    const page = await get(`/api/trajectories?${q({ run: '0/torn', dir: 'steps/step_0001/rollout' })}`);
    assert.equal(page.body.total, 6, 'the unfinished last line waits for its newline');
  });

  it('tells a live run from one whose trainer is gone, and shows the stage in progress', async () => {
    const { root, dir } = copyFixture('finished-run', 'live');
    rewindToRunning(dir, 3);
    fs.appendFileSync(
      path.join(dir, 'events.jsonl'),
      `${JSON.stringify({ time: new Date().toISOString(), type: 'stage_started', step: 4, epoch: 2, stage: 'rollout', total: 6 })}\n`,
    );
    fs.appendFileSync(
      path.join(dir, 'events.jsonl'),
      `${JSON.stringify({ time: new Date().toISOString(), type: 'stage_progress', step: 4, stage: 'rollout', done: 2, total: 6 })}\n`,
    );
    const get = client([root]);
    const running = (await get(`/api/run?${q({ run: '0/live' })}`)).body;
    assert.equal(running.status, 'running');
    assert.deepEqual(
      running.progress.stage && [
        running.progress.stage.step,
        running.progress.stage.stage,
        running.progress.stage.done,
        running.progress.stage.total,
      ],
      [4, 'rollout', 2, 6],
    );
    assert.equal(running.progress.completedSteps, 3);
    assert.deepEqual(running.test, { baseline: null, best: null, final: null });
    // A lock held by a process that no longer exists: the run was interrupted.
    fs.writeFileSync(path.join(dir, 'run.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, host: os.hostname() }));
    const gone = (await get(`/api/run?${q({ run: '0/live' })}`)).body;
    assert.equal(gone.status, 'interrupted');
    assert.equal(gone.progress.stage, undefined);
  });

  it('shows a run stopped by its budget with the reason', async () => {
    const { root, dir } = copyFixture('finished-run', 'stopped');
    rewindToRunning(dir, 3);
    const rs = JSON.parse(fs.readFileSync(path.join(dir, 'runtime_state.json'), 'utf8'));
    fs.writeFileSync(path.join(dir, 'runtime_state.json'), JSON.stringify({ ...rs, status: 'stopped' }));
    fs.appendFileSync(
      path.join(dir, 'events.jsonl'),
      `${JSON.stringify({ time: new Date().toISOString(), type: 'run_stopped', reason: 'budget', message: 'spent $5.01 of budget.max_usd 5' })}\n`,
    );
    const { body } = await client([root])(`/api/runs`);
    assert.equal(body.runs[0].status, 'stopped');
    assert.equal(body.runs[0].statusDetail, 'budget: spent $5.01 of budget.max_usd 5');
  });

  it('says the reason of an interrupted run once, with the command that resumes it', async () => {
    const { root, dir } = copyFixture('finished-run', 'interrupted');
    rewindToRunning(dir, 3);
    fs.rmSync(path.join(dir, 'run.lock'));
    const rs = JSON.parse(fs.readFileSync(path.join(dir, 'runtime_state.json'), 'utf8'));
    fs.writeFileSync(path.join(dir, 'runtime_state.json'), JSON.stringify({ ...rs, status: 'stopped' }));
    const message = 'interrupted: the calls that finished are saved; the run resumes after step 3';
    fs.appendFileSync(
      path.join(dir, 'events.jsonl'),
      `${JSON.stringify({ time: new Date().toISOString(), type: 'run_stopped', reason: 'interrupted', message, resume_command: 'skillopt train --resume x' })}\n`,
    );
    const { body } = await client([root])(`/api/runs`);
    assert.equal(body.runs[0].statusDetail, `${message}; to resume: skillopt train --resume x`);
  });

  it('reports a run root that does not exist instead of failing', async () => {
    const { body } = await client([path.join(tmpDir(), 'nowhere'), FIXTURES])('/api/runs');
    assert.match(body.problems[0], /nowhere does not exist/);
    assert.equal(body.runs.length, 2);
    assert.ok(body.runs.every((r: Json) => r.id.startsWith('1/')));
  });
});

describe('live updates', () => {
  it('pushes an event when a run writes a step, and when a new run appears', async () => {
    const { root, dir } = copyFixture('finished-run', 'live');
    rewindToRunning(dir, 3);
    const dash = await startDashboard({ roots: [root], host: '127.0.0.1', port: 0, pollMs: 50 });
    const ac = new AbortController();
    try {
      const res = await fetch(`${dash.url}api/live`, { signal: ac.signal });
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      const reader = res.body!.getReader();
      const seen: string[] = [];
      let buffer = '';
      const waitFor = async (pred: (block: string) => boolean) => {
        const deadline = Date.now() + 10_000;
        for (;;) {
          const blocks = buffer.split('\n\n');
          buffer = blocks.pop()!;
          for (const b of blocks) {
            seen.push(b);
            if (pred(b)) return b;
          }
          assert.ok(Date.now() < deadline, `no such event; saw ${JSON.stringify(seen)}`);
          const { value } = await reader.read();
          buffer += new TextDecoder().decode(value);
        }
      };
      await waitFor((b) => b.includes('event: hello'));
      finishStep(dir, 4);
      const msg = await waitFor((b) => b.includes('event: run'));
      const data = JSON.parse(
        msg
          .split('\n')
          .find((l) => l.startsWith('data: '))!
          .slice(6),
      );
      assert.equal(data.run, '0/live');
      assert.ok(data.files.includes('history.json'));
      fs.cpSync(path.join(FIXTURES, 'python-searchqa'), path.join(root, 'second'), { recursive: true });
      const runs = await waitFor((b) => b.includes('event: runs') && b.includes('0/second'));
      assert.match(runs, /0\/live/);
    } finally {
      ac.abort();
      await dash.close();
    }
  });
});
