import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decideLearningRate,
  describeItem,
  parseLearningRate,
  pickIndices,
  rankAndSelect,
} from '../../src/engine/stages/select.ts';
import { scriptedModel } from '../helpers/models.ts';
import { optimizerContext } from '../helpers/optimizer.ts';

const items = ['a', 'b', 'c', 'd', 'e'].map((c) => ({ op: 'append', content: c, support_count: 1 }));
const names = (xs: unknown[]) => xs.map((x) => (x as { content: string }).content);

describe('ranking and clipping', () => {
  it('keeps everything, with no call, when within the budget', async () => {
    const model = scriptedModel(() => '{}');
    const r = await rankAndSelect(optimizerContext(model), 'S', items.slice(0, 2), 3, '');
    assert.deepEqual(names(r.items), ['a', 'b']);
    assert.equal(model.requests.length, 0);
  });

  it('a budget of 0 selects nothing, with no call', async () => {
    const model = scriptedModel(() => '{"selected_indices": [0]}');
    const r = await rankAndSelect(optimizerContext(model), 'S', items, 0, '');
    assert.deepEqual(r.items, []);
    assert.equal(model.requests.length, 0);
  });

  it('applies the ranker order, dropping invalid and repeated indices, capped at the budget', async () => {
    const model = scriptedModel(() =>
      JSON.stringify({ reasoning: 'x', selected_indices: [3, 'x', 3, 9, -1, 1.5, 0, 4] }),
    );
    const r = await rankAndSelect(optimizerContext(model), 'S', items, 2, '');
    assert.deepEqual(names(r.items), ['d', 'a']);
    assert.equal(r.how, 'ranked');
    assert.match(String(model.requests[0]!.messages[0]!.content), /budget=2/);
  });

  it('takes the first items, with no call, when the merge ordered them for this budget; ranks them when it was for another', async () => {
    const model = scriptedModel(() => JSON.stringify({ reasoning: 'x', selected_indices: [4, 3] }));
    const byMerge = await rankAndSelect(optimizerContext(model), 'S', items, 2, '', 2);
    assert.deepEqual(names(byMerge.items), ['a', 'b']);
    assert.equal(byMerge.how, 'ranked_by_merge');
    assert.equal(model.requests.length, 0);
    const other = await rankAndSelect(optimizerContext(model), 'S', items, 2, '', 3);
    assert.deepEqual(names(other.items), ['e', 'd']);
    assert.equal(model.requests.length, 1);
  });

  it('falls back to the first items when the ranking is empty or unusable', async () => {
    for (const reply of ['{"selected_indices": []}', 'no idea', '{"selected_indices": [99]}']) {
      const r = await rankAndSelect(optimizerContext(scriptedModel(() => reply)), 'S', items, 3, '');
      assert.deepEqual(names(r.items), ['a', 'b', 'c'], reply);
      assert.equal(r.how, 'fallback_truncated');
    }
  });

  it('pickIndices never exceeds the budget (budget 0 gives none)', () => {
    assert.deepEqual(pickIndices([0, 1, 2], 5, 0), []);
    assert.deepEqual(pickIndices([2, 2, 1], 5, 5), [2, 1]);
  });

  it('describes items for the prompts', () => {
    assert.equal(
      describeItem({ op: 'replace', target: 'x', content: 'y', support_count: 3 }),
      'op=replace  target="x"  content="y"  support=3',
    );
    assert.match(
      describeItem({ type: 'add_rule', title: 't', instruction: 'i', priority_hint: 'high' }),
      /type=add_rule {2}title="t" {2}instruction="i" {2}priority=high/,
    );
  });
});

describe('autonomous learning rate', () => {
  it('parses what the model wrote', () => {
    assert.equal(parseLearningRate(3), 3);
    assert.equal(parseLearningRate(-2), 0);
    assert.equal(parseLearningRate('about 4 edits'), 4);
    assert.equal(parseLearningRate(2.5), undefined);
    assert.equal(parseLearningRate(true), undefined);
    assert.equal(parseLearningRate(null), undefined);
  });

  it('clamps to the available items; an unusable reply means 0, marked as fallback', async () => {
    const args = {
      skill: 'S',
      items,
      rolloutHard: 0.5,
      rolloutSoft: 0.6,
      rolloutN: 10,
      stepBufferText: '',
      metaSkill: '',
    };
    const big = await decideLearningRate(
      optimizerContext(scriptedModel(() => '{"learning_rate": 12, "reasoning": "go", "confidence": "high"}')),
      args,
    );
    assert.deepEqual([big.learning_rate, big.raw_learning_rate, big.clamped, big.fallback], [5, 12, true, false]);
    const bad = await decideLearningRate(optimizerContext(scriptedModel(() => '{"reasoning": "?"}')), args);
    assert.deepEqual([bad.learning_rate, bad.fallback], [0, true]);
  });
});
