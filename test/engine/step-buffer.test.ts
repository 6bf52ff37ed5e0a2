import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildPairs, category, comparisonText, keepByPolicy } from '../../src/engine/epoch/comparison-pairs.ts';
import {
  failurePatterns,
  optimizerMemory,
  renderStepBuffer,
  stepEntry,
} from '../../src/engine/optimizer-model/step-buffer.ts';
import { firstN, planEpoch, sampleTrain, schedule } from '../../src/engine/batches.ts';
import type { Trajectory } from '../../src/envs/types.ts';

const t = (id: string, hard: number, failReason?: string): Trajectory => ({
  id,
  hard,
  soft: hard,
  failReason,
  predicted: `p-${id}`,
  expected: `e-${id}`,
  conversation: [{ role: 'assistant', content: `answer ${id}` }],
});

describe('step buffer', () => {
  it('groups failures by the reason before the first colon', () => {
    const patterns = failurePatterns([
      t('a', 0, 'timeout: stalled'),
      t('b', 1),
      t('c', 0, 'timeout: again'),
      t('d', 0),
      t('e', 0, 'EM=0'),
    ]);
    assert.deepEqual(patterns, [
      { pattern: 'timeout', count: 2, task_ids: ['a', 'c'] },
      { pattern: 'unknown', count: 1, task_ids: ['d'] },
      { pattern: 'EM=0', count: 1, task_ids: ['e'] },
    ]);
  });

  it('records rejected changes with the scores that rejected them, and renders them', () => {
    const entry = stepEntry({
      step: 3,
      action: 'reject',
      trajectories: [t('a', 0, 'format: x'), t('b', 1), { ...t('c', 0), error: { kind: 'timeout', message: '' } }],
      findings: ['format: dates'],
      rejected: {
        items: [
          { op: 'append', content: 'Use upper case.' },
          { op: 'replace', target: 'a', content: 'b' },
        ],
        scoreBefore: 0.5,
        scoreAfter: 0.4,
      },
    });
    assert.equal(entry.n_total, 2, 'errors are not counted');
    assert.equal(entry.n_fail, 1);
    assert.deepEqual(entry.rejected_edits, [
      { op: 'append', content: 'Use upper case.', target: '' },
      { op: 'replace', content: 'b', target: 'a' },
    ]);
    const text = renderStepBuffer([entry]);
    assert.match(text, /### Step 3: REJECT \(1\/2 failed\)/);
    assert.match(
      text,
      /Rejected changes \(score 0.5 -> 0.4\):\n {4}1\. \[append\] "Use upper case\."\n {4}2\. \[replace\] target="a" -> "b"/,
    );
    assert.match(text, /analysts: format: dates/);
    assert.equal(renderStepBuffer([]), '');
  });

  it('an early-stopped reject keeps its bound on file; the optimizer is told only that the evaluation stopped early', () => {
    const entry = stepEntry({
      step: 2,
      action: 'reject',
      trajectories: [t('a', 0, 'x')],
      findings: [],
      rejected: { items: [{ op: 'append', content: 'y' }], scoreBefore: 0.6, scoreAfter: 0.55, stoppedEarly: true },
    });
    assert.equal(entry.score_after, undefined);
    assert.equal(entry.score_after_at_most, 0.55);
    const memory = optimizerMemory([entry]);
    assert.equal(memory.entries[0]!.score_after_at_most, undefined);
    assert.equal(memory.entries[0]!.stopped_early, true);
    assert.match(
      memory.text,
      /Rejected changes \(no better than the current score 0\.6; the evaluation stopped early\):\n {4}1\. \[append\] "y"/,
    );
    assert.doesNotMatch(memory.text, /0\.55/);
    // So the memory is the same whatever the bound: the next step's prompts are known before the gate stops.
    const other = stepEntry({
      step: 2,
      action: 'reject',
      trajectories: [t('a', 0, 'x')],
      findings: [],
      rejected: { items: [{ op: 'append', content: 'y' }], scoreBefore: 0.6, scoreAfter: 0.3, stoppedEarly: true },
    });
    assert.deepEqual(optimizerMemory([other]), memory);
    // An entry without a bound is shown as it is.
    const complete = stepEntry({
      step: 2,
      action: 'reject',
      trajectories: [t('a', 0, 'x')],
      findings: [],
      rejected: { items: [{ op: 'append', content: 'y' }], scoreBefore: 0.6, scoreAfter: 0.3 },
    });
    assert.deepEqual(optimizerMemory([complete]).entries, [complete]);
  });

  it('accepted steps carry no rejected changes', () => {
    const entry = stepEntry({
      step: 1,
      action: 'accept_new_best',
      trajectories: [t('a', 1)],
      findings: [],
      rejected: { items: [{ op: 'append', content: 'x' }], scoreBefore: 0, scoreAfter: 1 },
    });
    assert.equal(entry.rejected_edits, undefined);
  });
});

describe('comparison pairs', () => {
  it('categorises the four cases and skips errors', () => {
    assert.deepEqual(
      [category(false, true), category(true, false), category(false, false), category(true, true)],
      ['improved', 'regressed', 'persistent_fail', 'stable_success'],
    );
    const items = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id }));
    const prev = [t('a', 0), t('b', 1), t('c', 0), t('d', 1), t('e', 1)];
    const curr = [t('a', 1), t('b', 0), t('c', 0), t('d', 0.5), { ...t('e', 1), error: { kind: 'x', message: '' } }];
    const pairs = buildPairs(items, prev, curr);
    assert.deepEqual(
      pairs.map((p) => p.category),
      ['improved', 'regressed', 'persistent_fail', 'stable_success'],
    );
    assert.deepEqual(
      keepByPolicy(pairs, 'changed').map((p) => p.id),
      ['a', 'b'],
    );
    assert.deepEqual(
      keepByPolicy(pairs, 'unchanged').map((p) => p.id),
      ['c', 'd'],
    );
    const text = comparisonText(pairs);
    assert.ok(text.indexOf('Regressions') < text.indexOf('Persistent failures'));
    assert.ok(text.indexOf('Persistent failures') < text.indexOf('Improvements'));
    assert.match(text, /4 tasks: 1 improved, 1 regressed, 1 still failing, 1 still right/);
    assert.doesNotMatch(
      text.slice(text.indexOf('Stable successes')),
      /answer d/,
      'no trajectories for stable successes',
    );
  });
});

describe('steps and batches', () => {
  it('computes the step arithmetic of the reference', () => {
    assert.deepEqual(schedule(400, 40, 1, 4), {
      trainSize: 400,
      stepsPerEpoch: 10,
      batchesPerEpoch: 10,
      totalSteps: 40,
    });
    assert.deepEqual(schedule(107, 40, 1, 4).stepsPerEpoch, 3);
    assert.deepEqual(schedule(35, 10, 2, 3), { trainSize: 35, stepsPerEpoch: 2, batchesPerEpoch: 4, totalSteps: 6 });
  });

  it('plans each epoch as a seeded pass over the items, refilling when short', () => {
    const items = Array.from({ length: 7 }, (_, i) => ({ id: `i${i}` }));
    const a = planEpoch(items, 1, 42, 3, 3);
    assert.deepEqual(
      a.map((b) => b.items.length),
      [3, 3, 1],
    );
    assert.equal(new Set(a.flatMap((b) => b.items.map((i) => i.id))).size, 7);
    assert.deepEqual(planEpoch(items, 1, 42, 3, 3), a, 'deterministic');
    assert.notDeepEqual(
      planEpoch(items, 2, 42, 3, 3).map((b) => b.items),
      a.map((b) => b.items),
      'another epoch, another order',
    );
    assert.deepEqual(
      a.map((b) => b.seed),
      [1043, 1044, 1045],
    );
    const refill = planEpoch(items, 1, 42, 4, 3);
    assert.deepEqual(
      refill.map((b) => b.items.length),
      [4, 3, 4],
    );
  });

  it('samples and truncates deterministically', () => {
    const items = Array.from({ length: 10 }, (_, i) => ({ id: `i${i}` }));
    assert.deepEqual(sampleTrain(items, 4, 9), sampleTrain(items, 4, 9));
    assert.equal(sampleTrain(items, 4, 9).length, 4);
    assert.deepEqual(firstN(items, 0), items);
    assert.deepEqual(
      firstN(items, 3).map((i) => i.id),
      ['i0', 'i1', 'i2'],
    );
  });
});
