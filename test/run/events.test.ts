import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { EventLog, readEvents } from '../../src/run/events.ts';
import { attachConsoleReporter, formatEvent } from '../../src/run/reporter.ts';
import { tmpDir } from '../helpers/tmp.ts';

describe('event log', () => {
  it('appends typed events that read back in order, and reaches listeners', () => {
    const file = path.join(tmpDir(), 'events.jsonl');
    const log = new EventLog(file);
    const seen: string[] = [];
    log.on((e) => seen.push(e.type));
    log.emit({ type: 'stage_started', step: 1, epoch: 1, stage: 'rollout', total: 20 });
    log.emit({ type: 'gate_decision', step: 1, epoch: 1, action: 'reject', metric: 'hard', candidate_score: 0.5, current_score: 0.5, best_score: 0.5, rollouts_used: 3, rollouts_saved: 27 });
    const events = readEvents(file);
    assert.deepEqual(events.map((e) => e.type), ['stage_started', 'gate_decision']);
    assert.deepEqual(seen, ['stage_started', 'gate_decision']);
    assert.ok(!Number.isNaN(Date.parse(events[0]!.time)));
  });

  it('throttles progress events on disk but not for listeners', () => {
    const file = path.join(tmpDir(), 'events.jsonl');
    const log = new EventLog(file);
    let heard = 0;
    log.on(() => heard++);
    for (let i = 1; i <= 50; i++) log.emit({ type: 'stage_progress', step: 1, stage: 'rollout', done: i, total: 50 });
    assert.equal(heard, 50);
    const written = readEvents(file);
    assert.ok(written.length >= 2 && written.length < 10, `wrote ${written.length}`);
    const last = written.at(-1)!;
    assert.ok(last.type === 'stage_progress' && last.done === 50);
  });
});

describe('console reporter', () => {
  it('prints the original step lines with four-decimal scores', () => {
    const gate = formatEvent({ type: 'gate_decision', time: '', step: 3, epoch: 1, action: 'accept_new_best', metric: 'hard', candidate_score: 0.61, current_score: 0.58, best_score: 0.58, rollouts_used: 30, rollouts_saved: 0 });
    assert.equal(gate, '    [6/6 EVALUATE] ACCEPT (new best) hard=0.6100 > prev best 0.5800  (selection rollouts used=30 saved=0)');
    const step = formatEvent({ type: 'step_finished', time: '', step: 3, epoch: 1, action: 'reject', current_score: 0.5, best_score: 0.5, seconds: 2.04, timing: { rollout_s: 1.2, reflect_s: 0.4 } });
    assert.equal(step, '  [STEP 3 done] epoch=1 action=reject current=0.5000 best=0.5000 dt=2.0s\n    timing: rollout=1.2s reflect=0.4s');
    assert.equal(formatEvent({ type: 'stage_started', time: '', step: 1, epoch: 1, stage: 'rollout', detail: 'train items=20' }), '    [1/6 ROLLOUT] train items=20');
  });

  it('prints plain lines and no progress bar when not on a terminal', () => {
    const log = new EventLog();
    let out = '';
    const detach = attachConsoleReporter(log, { write: (t: string) => (out += t), isTTY: false }, { write: () => true });
    for (let i = 1; i <= 20; i++) log.emit({ type: 'stage_progress', step: 1, stage: 'rollout', done: i, total: 20 });
    log.emit({ type: 'stage_finished', step: 1, epoch: 1, stage: 'rollout', seconds: 1.25, detail: 'hard=0.4250 soft=0.5123' });
    detach();
    assert.equal(out, '    [1/6 done] hard=0.4250 soft=0.5123  (1.3s)\n');
  });

  it('draws a progress bar on a terminal', () => {
    const log = new EventLog();
    let out = '';
    const stream = { write: (t: string) => ((out += t), true), isTTY: true, columns: 80, cursorTo: () => true, clearLine: () => true, moveCursor: () => true, on: () => stream, removeListener: () => stream };
    const detach = attachConsoleReporter(log, stream as never, { write: () => true });
    for (let i = 1; i <= 20; i++) log.emit({ type: 'stage_progress', step: 1, stage: 'rollout', done: i, total: 20 });
    detach();
    assert.match(out, /rollout \[.*\] \d+\/20/);
  });
});
