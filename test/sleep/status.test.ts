import assert from 'node:assert/strict';
import { test } from 'node:test';
import { historyRows } from '../../src/sleep/status.ts';
import type { NightRecord } from '../../src/sleep/state.ts';

const night = (n: number, documents: NightRecord['documents'], note = ''): NightRecord => ({
  night: n,
  project: '/home/dev/depot',
  started_at: '2026-11-30T21:09:54.000Z',
  ended_at: '2026-11-30T21:10:00.000Z',
  dir: '',
  outcome: documents.length ? 'staged' : 'stopped',
  n_sessions: 14,
  n_tasks: n === 1 ? 14 : 0,
  documents,
  tokens: 0,
  cost_usd: 0,
  note,
});

test('history: the words left under their headings, the counts right, the documents (of any length) last', () => {
  const [head, first, second] = historyRows([
    night(1, [
      { name: 'skillopt-sleep-learned', action: 'accept_new_best', baseline: 0, candidate: 0.4, accepted: true },
      { name: 'depot-records', action: 'reject', baseline: 0.5, candidate: 0.5, accepted: false },
    ]),
    night(12, [], "the night's budget is reached"),
  ]);
  for (const [word, cell] of [['project', '/home/dev/depot'], ['outcome', 'staged'], ['documents', 'skillopt-sleep-learned: accept_new_best 0.000→0.400; depot-records: reject 0.500→0.500']] as const) {
    assert.equal(first!.indexOf(cell), head!.indexOf(word), `${cell} under ${word}:\n${head}\n${first}`);
  }
  assert.equal(second!.indexOf("the night's budget is reached"), head!.indexOf('documents'));
  assert.equal(first!.indexOf('14') + 2, head!.indexOf('sessions') + 'sessions'.length, 'counts align right');
});
