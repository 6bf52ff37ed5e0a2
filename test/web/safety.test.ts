/**
 * Hostile run directories: links to files and directories outside the run, and named pipes
 * where run files should be. Every API endpoint is asked for each planted file; none may return
 * what lies outside, and none may stall the server. The server runs in a process of its own (as
 * `skillopt ui`), so that a server stalled by a pipe fails these tests instead of freezing them.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isLoopback } from '../../src/web/server/hosts.ts';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { copyFixture, startUiProcess, type UiProcess } from './helpers.ts';

const SECRET = 'SECRET-7f3a-outside-the-run';

/** Files outside every run root, each holding the secret in a place the dashboard would show. */
function plantOutside(): string {
  const out = fs.realpathSync(tmpDir('skillopt-outside-'));
  const w = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(out, rel)), { recursive: true });
    fs.writeFileSync(path.join(out, rel), text);
  };
  const now = new Date().toISOString();
  w('secret.md', `# Skill\n\n${SECRET}\n`);
  w(
    'config.json',
    JSON.stringify({
      config: {
        env: { name: SECRET },
        model: { target: { backend: 'sim', model: SECRET }, optimizer: { backend: 'sim', model: SECRET } },
      },
    }),
  );
  w('history.json', JSON.stringify([{ step: 1, epoch: 1, action: SECRET }]));
  w('events.jsonl', `${JSON.stringify({ time: now, type: 'log', level: 'warn', message: SECRET })}\n`);
  w(
    'calls.jsonl',
    `${JSON.stringify({ purpose: SECRET, model: SECRET, usage: { input: 1, output: 1 }, cost_usd: 0 })}\n`,
  );
  w(
    'summary.json',
    JSON.stringify({
      version: SECRET,
      token_summary: { [SECRET]: { calls: 1, prompt_tokens: 1, completion_tokens: 1 } },
    }),
  );
  w('results.jsonl', `${JSON.stringify({ id: SECRET, hard: 1, soft: 1, task: SECRET, expected: SECRET })}\n`);
  w('conversation.json', JSON.stringify([{ role: 'user', content: SECRET }]));
  w('slow_result.json', JSON.stringify({ action: SECRET }));
  w('test_summary.json', JSON.stringify({ [SECRET]: { total: 1, hard_acc: 1 } }));
  w('skills/skill_v0000.md', `${SECRET}\n`);
  w('step/step_record.json', JSON.stringify({ step: 2, epoch: 1, action: SECRET }));
  w('step/candidate_skill.md', `${SECRET}\n`);
  w('step/ranked_edits.json', JSON.stringify({ reasoning: SECRET, edits: [{ op: 'append', content: SECRET }] }));
  w(
    'step/trajectory_digest.json',
    JSON.stringify({
      step: 2,
      score_before: 0.5,
      score_after: 0.3,
      rejected_edits: [{ op: 'append', content: SECRET }],
    }),
  );
  w('step/rollout/results.jsonl', `${JSON.stringify({ id: SECRET, hard: 0, soft: 0, task: SECRET })}\n`);
  w('prediction/conversation.json', JSON.stringify([{ role: 'assistant', content: SECRET }]));
  w(
    'evals/e1/eval_summary.json',
    JSON.stringify({
      split: 'test',
      cells: [{ skill_label: SECRET, target: SECRET, n_items: 1, hard: 1, soft: 1 }],
      comparisons: [],
    }),
  );
  return out;
}

/** Replaces `rel` in `dir` by a symlink to `target`. */
function link(dir: string, rel: string, target: string): void {
  fs.rmSync(path.join(dir, rel), { recursive: true, force: true });
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.symlinkSync(target, path.join(dir, rel));
}

/** Replaces `rel` in `dir` by a named pipe that nothing writes to. */
function fifo(dir: string, rel: string): void {
  fs.rmSync(path.join(dir, rel), { recursive: true, force: true });
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  execFileSync('mkfifo', [path.join(dir, rel)]);
}

const q = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

/** Every endpoint, asked for the files planted in the run `run`. */
function endpoints(run: string): string[] {
  return [
    '/api/runs',
    `/api/run?${q({ run })}`,
    `/api/history?${q({ run })}`,
    ...[1, 2, 4].map((step) => `/api/step?${q({ run, step })}`),
    `/api/skills?${q({ run })}`,
    ...['v:0', 'best', 'cand:1', 'cand:2', 'slow:2'].map((ref) => `/api/skill?${q({ run, ref })}`),
    `/api/diff?${q({ run, a: 'v:0', b: 'v:1' })}`,
    `/api/diff?${q({ run, a: 'best', b: 'v:6' })}`,
    `/api/diff?${q({ run, a: 'v:1', b: 'cand:1' })}`,
    `/api/diff?${q({ run, a: 'v:1', b: 'slow:2' })}`,
    `/api/rollouts?${q({ run })}`,
    ...[1, 2, 4].map((step) => `/api/rollouts?${q({ run, step })}`),
    ...['steps/step_0001/rollout', 'steps/step_0002/rollout', 'selection_eval_baseline'].map(
      (dir) => `/api/trajectories?${q({ run, dir })}`,
    ),
    `/api/trajectory?${q({ run, dir: 'steps/step_0001/rollout', n: 0 })}`,
    `/api/trajectory?${q({ run, dir: 'steps/step_0004/rollout', n: 0 })}`,
    ...['planted.md', 'history.json', 'config.json', 'steps/step_0002/step_record.json'].map(
      (p) => `/api/file?${q({ run, path: p })}`,
    ),
    `/api/evals?${q({ run })}`,
  ];
}

describe('the dashboard reads nothing outside a run and never blocks on a run file', () => {
  const root = fs.realpathSync(tmpDir('skillopt-web-safety-'));
  const outside = plantOutside();
  const o = (rel: string) => path.join(outside, rel);

  // Links to files outside, one for every file an endpoint reads.
  const files = copyFixture('finished-run', 'file-links', root).dir;
  for (const [rel, target] of [
    ['skills/skill_v0000.md', 'secret.md'],
    ['best_skill.md', 'secret.md'],
    ['steps/step_0001/candidate_skill.md', 'secret.md'],
    ['slow_update/epoch_02/candidate_skill.md', 'secret.md'],
    ['config.json', 'config.json'],
    ['history.json', 'history.json'],
    ['events.jsonl', 'events.jsonl'],
    ['calls.jsonl', 'calls.jsonl'],
    ['summary.json', 'summary.json'],
    ['steps/step_0001/rollout/results.jsonl', 'results.jsonl'],
    ['selection_eval_baseline/results.jsonl', 'results.jsonl'],
    ['steps/step_0004/rollout/predictions/q07/conversation.json', 'conversation.json'],
    ['slow_update/epoch_01/slow_result.json', 'slow_result.json'],
    ['test_eval/summary.json', 'test_summary.json'],
    ['steps/step_0002/step_record.json', 'step/step_record.json'],
    ['steps/step_0002/ranked_edits.json', 'step/ranked_edits.json'],
    ['steps/step_0002/trajectory_digest.json', 'step/trajectory_digest.json'],
    ['planted.md', 'secret.md'],
    ['evals/e1/eval_summary.json', 'evals/e1/eval_summary.json'],
  ] as const) {
    link(files, rel, o(target));
  }

  // Links to directories outside.
  const dirs = copyFixture('finished-run', 'dir-links', root).dir;
  link(dirs, 'skills', o('skills'));
  link(dirs, 'steps/step_0002', o('step'));
  link(dirs, 'selection_eval_baseline', o('step/rollout'));
  link(dirs, 'steps/step_0004/rollout/predictions/q07', o('prediction'));
  fs.mkdirSync(path.join(dirs, 'slow_update/epoch_03'));
  link(dirs, 'slow_update/epoch_03', o('step'));
  link(dirs, 'evals', o('evals'));

  // Named pipes where the run's files should be.
  const pipes = copyFixture('finished-run', 'pipes', root).dir;
  for (const rel of [
    'config.json',
    'history.json',
    'runtime_state.json',
    'summary.json',
    'events.jsonl',
    'calls.jsonl',
    'run.lock',
    'skills/skill_v0000.md',
    'best_skill.md',
    'steps/step_0001/candidate_skill.md',
    'steps/step_0001/step_record.json',
    'steps/step_0001/ranked_edits.json',
    'steps/step_0001/rollout/results.jsonl',
    'steps/step_0004/rollout/predictions/q07/conversation.json',
    'selection_eval_baseline/results.jsonl',
    'test_eval/summary.json',
    'slow_update/epoch_01/slow_result.json',
    'slow_update/epoch_02/candidate_skill.md',
    'planted.md',
    'evals/e1/eval_summary.json',
  ]) {
    fifo(pipes, rel);
  }

  let ui: UiProcess;
  before(async () => {
    ui = await startUiProcess(['--runs', root]);
  });
  after(async () => {
    await ui?.stop(2000);
  });

  /** A request that fails the test, rather than hanging it, when the server does not answer. */
  const get = async (url: string) => {
    const res = await fetch(`${ui.url}${url.slice(1)}`, { signal: AbortSignal.timeout(30_000) }).catch((err: Error) => {
      throw new Error(`${url}: no answer (${err.message}); the server is stalled:\n${ui.output()}`);
    });
    return { status: res.status, text: await res.text() };
  };

  for (const [label, run] of [
    ['links to files outside', '0/file-links'],
    ['links to directories outside', '0/dir-links'],
    ['named pipes', '0/pipes'],
  ] as const) {
    it(`answers every endpoint of a run with ${label}, and shows nothing from outside`, async () => {
      for (const url of endpoints(run)) {
        const res = await get(url);
        // The list of runs is judged by this run's row (the other runs have their own test).
        if (url === '/api/runs')
          res.text = JSON.stringify(JSON.parse(res.text).runs.find((r: { id: string }) => r.id === run));
        assert.ok(
          !res.text.includes(SECRET),
          `${url} answered ${res.status} with what lies outside the run: ${res.text.slice(0, 300)}`,
        );
        assert.notEqual(res.status, 500, `${url}: ${res.text}`);
      }
      assert.equal((await get('/api/ping')).status, 200);
    });
  }

  it('refuses a skill that is a link out of the run, or a pipe, and says why', async () => {
    for (const [run, ref, why] of [
      ['0/file-links', 'v:0', /skills\/skill_v0000\.md resolves outside the run directory/],
      ['0/file-links', 'best', /best_skill\.md resolves outside the run directory/],
      ['0/file-links', 'cand:1', /candidate_skill\.md resolves outside the run directory/],
      ['0/file-links', 'slow:2', /candidate_skill\.md resolves outside the run directory/],
      ['0/dir-links', 'v:0', /resolves outside the run directory/],
      ['0/dir-links', 'cand:2', /resolves outside the run directory/],
      ['0/pipes', 'v:0', /skill_v0000\.md is a named pipe, not a regular file/],
      ['0/pipes', 'best', /best_skill\.md is a named pipe/],
    ] as const) {
      const res = await get(`/api/skill?${q({ run, ref })}`);
      assert.equal(res.status, 403, `${run} ${ref}: ${res.text}`);
      assert.match(JSON.parse(res.text).error, why);
    }
    const diff = await get(`/api/diff?${q({ run: '0/file-links', a: 'v:0', b: 'best' })}`);
    assert.equal(diff.status, 403);
  });

  it('names the run files it refused among the run problems, and shows the rest of the run', async () => {
    const links = JSON.parse((await get(`/api/run?${q({ run: '0/file-links' })}`)).text);
    for (const f of ['config.json', 'history.json', 'events.jsonl', 'calls.jsonl', 'summary.json']) {
      assert.ok(
        links.problems.some((p: string) => p.includes(`${f} resolves outside the run directory`)),
        `${f} in ${JSON.stringify(links.problems)}`,
      );
    }
    const pipes = JSON.parse((await get(`/api/run?${q({ run: '0/pipes' })}`)).text);
    for (const f of ['config.json', 'history.json', 'runtime_state.json', 'events.jsonl', 'calls.jsonl', 'run.lock']) {
      assert.ok(
        pipes.problems.some((p: string) => p.includes(`${f} is a named pipe`)),
        `${f} in ${JSON.stringify(pipes.problems)}`,
      );
    }
    const page = await get(`/api/trajectories?${q({ run: '0/file-links', dir: 'steps/step_0001/rollout' })}`);
    assert.equal(page.status, 403);
    assert.match(JSON.parse(page.text).error, /results\.jsonl resolves outside the run directory/);
    const fine = await get(`/api/trajectories?${q({ run: '0/file-links', dir: 'steps/step_0003/rollout' })}`);
    assert.equal(fine.status, 200, 'the files that are not links still read');
  });
});

describe('a diff of two large skills', () => {
  const { root, dir } = copyFixture('finished-run', 'big');
  // Every line differs: the diff algorithm's work grows with the product of the two lengths.
  const lines = (tag: string, n: number) =>
    Array.from({ length: n }, (_, i) => `- ${tag} rule ${i}: ${(i * 7919) % 10007}`).join('\n');
  fs.writeFileSync(path.join(dir, 'skills/skill_v0000.md'), lines('alpha', 12_000));
  fs.writeFileSync(path.join(dir, 'best_skill.md'), lines('beta', 12_000));
  fs.writeFileSync(path.join(dir, 'skills/skill_v0001.md'), lines('gamma', 60_000));
  let dash: RunningDashboard;
  before(async () => {
    dash = await startDashboard({ roots: [root], host: '127.0.0.1', port: 0, diffTimeoutMs: 1000 });
  });
  after(() => dash?.close());

  it('keeps the server answering while it runs, then refuses it in words when it takes too long', async () => {
    const order: string[] = [];
    const received = new Promise<void>((resolve) =>
      dash.server.on('request', (req: http.IncomingMessage) => req.url?.startsWith('/api/diff') && resolve()),
    );
    const diff = fetch(`${dash.url}api/diff?${q({ run: '0/big', a: 'v:0', b: 'best' })}`).then(async (res) => {
      order.push('diff');
      return { status: res.status, body: (await res.json()) as { error?: string } };
    });
    await received;
    const ping = await fetch(`${dash.url}api/ping`);
    order.push('ping');
    assert.equal(ping.status, 200);
    const done = await diff;
    assert.deepEqual(order, ['ping', 'diff'], 'the ping was answered while the diff was being computed');
    assert.equal(done.status, 503);
    assert.match(done.body.error!, /the diff of v:0 and best did not finish within 1 s .*open each one whole instead/);
    // The server is not left busy: a small diff of the same run still works.
    const small = await fetch(`${dash.url}api/diff?${q({ run: '0/big', a: 'v:2', b: 'v:3' })}`);
    assert.equal(small.status, 200);
  });

  it('is stopped when the server stops', async () => {
    const patient = await startDashboard({ roots: [root], host: '127.0.0.1', port: 0, diffTimeoutMs: 600_000 });
    const received = new Promise<void>((resolve) => patient.server.on('request', () => resolve()));
    const diff = fetch(`${patient.url}api/diff?${q({ run: '0/big', a: 'v:0', b: 'best' })}`).then(
      (res) => res.status,
      () => 'closed',
    );
    await received;
    assert.equal(patient.diffs.active, 1, 'the diff is being computed');
    await patient.close();
    assert.equal(patient.diffs.active, 0, 'its worker thread is ended');
    assert.ok(['closed', 503].includes(await diff), 'the request is not answered with a diff');
  });

  it('refuses a skill too large to diff before computing anything', async () => {
    const res = await fetch(`${dash.url}api/diff?${q({ run: '0/big', a: 'v:0', b: 'v:1' })}`);
    assert.equal(res.status, 413);
    assert.match(
      ((await res.json()) as { error: string }).error,
      /skill v:1 is \d+\.\d MB; a diff compares skills of up to 1\.0 MB each/,
    );
  });
});

describe('which host names the dashboard answers (DNS rebinding)', () => {
  const { root } = copyFixture('finished-run', 'run');
  const ask = (port: number, host: string, address = '127.0.0.1') =>
    new Promise<number>((resolve, reject) => {
      const req = http.request({ host: address, port, path: '/api/ping', headers: { Host: host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });

  it('on every address: this machine, loopback and the allowed names only', async () => {
    const dash = await startDashboard({ roots: [root], host: '0.0.0.0', port: 0, allowedHosts: ['dash.example.org'] });
    try {
      const p = dash.port;
      assert.equal(await ask(p, `attacker.example:${p}`), 403);
      assert.equal(await ask(p, `dash.example.org.evil.test:${p}`), 403);
      assert.equal(await ask(p, '10.255.255.254'), 403, 'an address this machine does not have');
      for (const ok of [
        `localhost:${p}`,
        `127.0.0.1:${p}`,
        `127.3.2.1:${p}`,
        `[::1]:${p}`,
        `dash.example.org:${p}`,
        `DASH.example.org.:${p}`,
      ]) {
        assert.equal(await ask(p, ok), 200, ok);
      }
      const own = Object.values(os.networkInterfaces())
        .flatMap((l) => l ?? [])
        .find((a) => a.family === 'IPv4' && !a.internal);
      if (own) assert.equal(await ask(p, `${own.address}:${p}`), 200, `this machine's own address ${own.address}`);
    } finally {
      await dash.close();
    }
  });

  it('treats all of 127.0.0.0/8 and ::1 as loopback', async () => {
    for (const h of [
      '127.0.0.1',
      '127.0.0.2',
      '127.255.255.254',
      '::1',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
      'localhost',
      'app.localhost',
    ])
      assert.equal(isLoopback(h), true, h);
    for (const h of ['128.0.0.1', '0.0.0.0', '::', '10.0.0.1', 'localhost.example.com', 'example.com'])
      assert.equal(isLoopback(h), false, h);
    // Bound to another loopback address, the Host check stays on.
    const dash = await startDashboard({ roots: [root], host: '127.0.0.2', port: 0 });
    try {
      assert.equal(await ask(dash.port, `127.0.0.2:${dash.port}`, '127.0.0.2'), 200);
      assert.equal(await ask(dash.port, `localhost:${dash.port}`, '127.0.0.2'), 200);
      assert.equal(await ask(dash.port, `attacker.example:${dash.port}`, '127.0.0.2'), 403);
    } finally {
      await dash.close();
    }
  });
});
