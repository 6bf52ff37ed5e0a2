/** The dashboard's read API at its edges: paths outside the run roots, broken and unfinished runs, live updates. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { FIXTURES, apiClient, copyFixture, finishStep, queryString, rewindToRunning } from './helpers.ts';

type Json = any;

describe('dashboard API refuses paths outside the run roots', () => {
  const { root, dir } = copyFixture('finished-run', 'run');
  const outside = tmpDir('skillopt-outside-');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'not for the dashboard');
  fs.writeFileSync(path.join(outside, 'history.json'), '[]');
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'leak.txt'));
  fs.symlinkSync(outside, path.join(dir, 'steps', 'step_0009'));
  fs.symlinkSync(outside, path.join(root, 'linked-run'));
  fs.writeFileSync(path.join(dir, '.env'), 'OPENAI_API_KEY=sk-test');
  const get = apiClient([root]);

  for (const [label, url] of [
    ['a run id that climbs', `/api/run?${queryString({ run: '0/../..' })}`],
    ['a run id that climbs inside a path', `/api/run?${queryString({ run: '0/run/../../..' })}`],
    ['an absolute run id', `/api/run?${queryString({ run: '0//etc' })}`],
    ['a file path that climbs', `/api/file?${queryString({ run: '0/run', path: '../../../etc/passwd' })}`],
    ['an absolute file path', `/api/file?${queryString({ run: '0/run', path: '/etc/passwd' })}`],
    ['a hidden file', `/api/file?${queryString({ run: '0/run', path: '.env' })}`],
    ['a symlink to a file outside', `/api/file?${queryString({ run: '0/run', path: 'leak.txt' })}`],
    ['a rollout directory that climbs', `/api/trajectories?${queryString({ run: '0/run', dir: '../..' })}`],
    [
      'a rollout directory through a symlink out',
      `/api/trajectories?${queryString({ run: '0/run', dir: 'steps/step_0009' })}`,
    ],
    ['a run reached through a symlink out of the root', `/api/run?${queryString({ run: '0/linked-run' })}`],
    ['a backslash climb', `/api/file?${queryString({ run: '0/run', path: '..\\..\\etc\\passwd' })}`],
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
    const ok = await get(`/api/file?${queryString({ run: '0/run', path: 'steps/step_0001/merged_patch.json' })}`);
    assert.equal(ok.status, 200);
    assert.match(ok.body.text, /Format numbers nicely/);
    fs.writeFileSync(path.join(dir, 'run.bin'), 'x');
    const bin = await get(`/api/file?${queryString({ run: '0/run', path: 'run.bin' })}`);
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
    const get = apiClient([root]);
    const list = await get('/api/runs');
    assert.equal(list.status, 200);
    const row = list.body.runs[0];
    assert.equal(row.problems.length, 1);
    assert.match(row.problems[0], /history\.json is not valid JSON .*expected a list of step records/);
    const run = await get(`/api/run?${queryString({ run: '0/broken' })}`);
    assert.equal(run.status, 200);
    assert.match(run.body.problems[0], /history\.json/);
    const history = await get(`/api/history?${queryString({ run: '0/broken' })}`);
    assert.equal(history.status, 200);
    assert.deepEqual(history.body.rows, []);
    assert.match(history.body.problems[0], /not valid JSON/);
  });

  it('names a broken test summary and still shows the others', async () => {
    const { root, dir } = copyFixture('finished-run', 'badtest');
    fs.writeFileSync(path.join(dir, 'test_eval_final/summary.json'), '{"overall": {"total": "many"}}');
    const { status, body } = await apiClient([root])(`/api/run?${queryString({ run: '0/badtest' })}`);
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
    const get = apiClient([root]);
    const { body } = await get(`/api/history?${queryString({ run: '0/odd' })}`);
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
    const get = apiClient([root]);
    const run = await get(`/api/run?${queryString({ run: '0/torn' })}`);
    assert.equal(run.status, 200);
    assert.match(run.body.problems.join('\n'), /1 line\(s\) are not events/);
    const page = await get(`/api/trajectories?${queryString({ run: '0/torn', dir: 'steps/step_0001/rollout' })}`);
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
    const get = apiClient([root]);
    const running = (await get(`/api/run?${queryString({ run: '0/live' })}`)).body;
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
    const gone = (await get(`/api/run?${queryString({ run: '0/live' })}`)).body;
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
    const { body } = await apiClient([root])(`/api/runs`);
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
    const { body } = await apiClient([root])(`/api/runs`);
    assert.equal(body.runs[0].statusDetail, `${message}; to resume: skillopt train --resume x`);
  });

  it('reports a run root that does not exist instead of failing', async () => {
    const { body } = await apiClient([path.join(tmpDir(), 'nowhere'), FIXTURES])('/api/runs');
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
