/**
 * Large run files do not stall the dashboard: a big event log is indexed a step at a time off the
 * request, so that other requests (/api/ping) are answered meanwhile, and the run says how far the
 * reading is until it is complete; a result line too large to show whole is shown cut, saying so.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { copyFixture } from './helpers.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('the dashboard on large run files', () => {
  const root = tmpDir('skillopt-web-large-');
  const big = copyFixture('finished-run', 'big-log', root).dir;
  const wide = copyFixture('finished-run', 'wide-row', root).dir;
  let dash: RunningDashboard;
  const get = async (url: string): Promise<Json> => (await fetch(`${dash.url}${url.slice(1)}`)).json();

  before(async () => {
    // About 120 MB of events: the fixture's run, its steps logged again and again, then its end.
    const lines = fs.readFileSync(path.join(big, 'events.jsonl'), 'utf8').split('\n').filter(Boolean);
    const last = lines.at(-1)!;
    const middle = lines.slice(1, -1).join('\n');
    const fd = fs.openSync(path.join(big, 'events.jsonl'), 'w');
    fs.writeSync(fd, `${lines[0]}\n`);
    for (let written = 0; written < 120 << 20; written += middle.length + 1) fs.writeSync(fd, `${middle}\n`);
    fs.writeSync(fd, `${last}\n`);
    fs.closeSync(fd);
    // A result line of 5 MB.
    const results = path.join(wide, 'steps/step_0001/rollout/results.jsonl');
    const rows = fs.readFileSync(results, 'utf8').split('\n').filter(Boolean);
    const huge = JSON.stringify({ ...JSON.parse(rows[0]!), id: 'huge', prediction: 'x'.repeat(5 << 20) });
    fs.writeFileSync(results, `${[huge, ...rows.slice(1)].join('\n')}\n`);
    dash = await startDashboard({ roots: [root], host: '127.0.0.1', port: 0, pollMs: 60_000 });
  });
  after(() => dash?.close());

  it('answers /api/ping while it reads a 120 MB event log, and says how far it is', async (t) => {
    let done = false;
    const first = get('/api/runs').finally(() => (done = true));
    let slowest = 0;
    while (!done) {
      const t = Date.now();
      await get('/api/ping');
      slowest = Math.max(slowest, Date.now() - t);
      await new Promise((r) => setTimeout(r, 10));
    }
    const runs = (await first).runs as Json[];
    t.diagnostic(`slowest ping: ${slowest} ms`);
    assert.ok(slowest < 1000, `a ping waited ${slowest} ms`);
    const row = runs.find((r) => r.id === '0/big-log');
    assert.match(row.problems.join('\n'), /reading .*events\.jsonl: \d+\.\d MB of \d+\.\d MB so far/);
    // It goes on reading between requests, and the run is whole once it is read.
    const end = Date.now() + 120_000;
    let now = row;
    while (now.problems.some((p: string) => p.startsWith('reading ')) && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      now = (await get(`/api/run?run=${encodeURIComponent('0/big-log')}`)) as Json;
    }
    assert.deepEqual(now.problems, []);
    assert.equal(now.status, 'finished');
  });

  it('shows a result line too large to show whole cut, and says so', async () => {
    const dir = 'steps/step_0001/rollout';
    const page = await get(`/api/trajectories?run=${encodeURIComponent('0/wide-row')}&dir=${dir}`);
    assert.equal(page.rows[0].id, 'huge');
    const detail = await get(`/api/trajectory?run=${encodeURIComponent('0/wide-row')}&dir=${dir}&n=0`);
    assert.match(detail.resultNote, /this result line is 5\.0 MB, more than the 2 MB shown whole/);
    assert.equal(detail.result.id, 'huge');
    assert.ok(detail.result.prediction.length < 70_000, `${detail.result.prediction.length} characters sent`);
    assert.match(detail.result.prediction, /… \[\d+ more characters\]$/);
  });
});
