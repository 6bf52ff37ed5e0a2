/**
 * The candidate pool (`optimizer.pool_size`): the Pareto front over selection items, each step's
 * parent drawn from it, merges of two members' edits (`optimizer.pool_merge`), and the lineage
 * of every candidate in `pool/lineage.json`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { dominated, frontWeights, pickFromFront, toDrop } from '../../src/engine/candidate-pool/front.ts';
import type { LineageNode } from '../../src/engine/candidate-pool/candidate-pool.ts';
import { StepRecordSchema } from '../../src/run/records.ts';
import { skillHash } from '../../src/skill/document.ts';
import { historyOf, readText, trainSim } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

const POOL = [
  'optimizer.pool_size=3',
  'optimizer.pool_merge=true',
  'optimizer.learning_rate=2',
  'optimizer.min_learning_rate=1',
  'train.seed=3',
];

interface Lineage {
  members: string[];
  nodes: LineageNode[];
}
const lineageOf = (out: string) => JSON.parse(readText(path.join(out, 'pool', 'lineage.json'))) as Lineage;

describe('the Pareto front over selection items', () => {
  it('weighs each candidate by the items it is best on; items nobody solves count for none', () => {
    const a = [1, 0, 1, 0];
    const b = [0, 1, 1, 0];
    const c = [0, 0, 1, 0];
    assert.deepEqual(frontWeights([a, b, c]), [2, 2, 1]);
    assert.deepEqual(
      frontWeights([
        [0, 0],
        [0, undefined],
      ]),
      [0, 0],
    );
  });

  it('a candidate no better on any item and worse on one is dominated', () => {
    assert.equal(dominated([0, 0, 1], [1, 0, 1]), true);
    assert.equal(dominated([1, 0, 1], [1, 0, 1]), false, 'equal: not dominated');
    assert.equal(dominated([1, 0, 0], [0, 1, 1]), false, 'better on one item');
  });

  it('drops a dominated candidate first, then the one best on the fewest items; never one that is kept', () => {
    const candidates = [
      { values: [1, 1, 1, 0], score: 0.75, order: 0, keep: false },
      { values: [1, 1, 1, 1], score: 1, order: 1, keep: true },
      { values: [0, 0, 0, 1], score: 0.25, order: 2, keep: false },
    ];
    assert.equal(toDrop(candidates), 2, 'both dominated: the one best on fewer items, then the lower mean');
    const unique = [
      { values: [1, 1, 1, 0], score: 0.75, order: 0, keep: false },
      { values: [0, 0, 0, 1], score: 0.25, order: 1, keep: false },
      { values: [1, 1, 0, 0], score: 0.5, order: 2, keep: false },
    ];
    assert.equal(toDrop(unique), 2, 'the dominated one, though the lowest mean is another: it alone solves item 4');
    assert.equal(toDrop(unique.map((c) => ({ ...c, keep: true }))), undefined, 'all kept: none dropped');
  });

  it('draws the parent in proportion to its weight; with no item solved, the highest mean', () => {
    const candidates = [
      { values: [1, 0, 0, 0], score: 0.25 },
      { values: [0, 1, 1, 1], score: 0.75 },
    ];
    assert.equal(pickFromFront(candidates, 0.2), 0);
    assert.equal(pickFromFront(candidates, 0.3), 1);
    assert.equal(pickFromFront(candidates, 0.99), 1);
    assert.equal(
      pickFromFront(
        [
          { values: [0], score: 0.1 },
          { values: [0], score: 0.3 },
        ],
        0.1,
      ),
      1,
    );
  });
});

describe('training with a candidate pool', () => {
  it('records every candidate with its parents, keeps at most pool_size members (the current and best among them), and merges two members', async () => {
    const { out, history, summary } = await trainSim(POOL);
    assert.equal(summary.status, 'finished');
    const lineage = lineageOf(out);
    const node = (id: string) => lineage.nodes.find((n) => n.id === id);
    assert.equal(node('initial_skill')?.kind, 'initial');

    let before = ['initial_skill'];
    let merges = 0;
    for (const r of history) {
      assert.ok(StepRecordSchema.safeParse(r).success, `step ${r.step}: a valid record`);
      const pool = r.pool!;
      // The parent was a member before the step, or the skill a slow update made just before it.
      const joined = lineage.nodes.filter((n) => n.kind === 'slow_update' && n.step === r.step - 1).map((n) => n.id);
      assert.ok(
        [...before, ...joined].includes(pool.parent),
        `step ${r.step}: parent ${pool.parent} was in the pool (${[...before, ...joined]})`,
      );
      assert.ok(pool.members.length <= 3, `step ${r.step}: ${pool.members.length} members`);
      for (const id of pool.dropped) assert.equal(node(id)?.dropped_at, r.step, `${id} dropped at step ${r.step}`);
      const candidate = node(`step_${String(r.step).padStart(4, '0')}`);
      if (r.action.startsWith('skip')) assert.equal(candidate, undefined, `step ${r.step}: no candidate`);
      else {
        assert.deepEqual(candidate?.parents, [pool.parent], `step ${r.step}: its candidate's parent`);
        assert.equal(candidate.action, r.action);
      }
      if (pool.merge) {
        merges++;
        const m = node(`merge_${String(r.step).padStart(4, '0')}`)!;
        assert.deepEqual(m.parents, pool.merge.parents);
        assert.equal(m.parents[0], candidate!.id, 'a merge starts from the step candidate just taken in');
        assert.equal(m.action, pool.merge.action);
      }
      before = pool.members;
    }
    assert.ok(merges >= 2, `${merges} merges tried`);
    assert.ok(
      lineage.nodes.some((n) => n.kind === 'merge' && n.action.startsWith('accept')),
      'a merge was taken in',
    );

    const runtime = JSON.parse(readText(path.join(out, 'runtime_state.json')));
    assert.deepEqual(runtime.pool, lineage.members);
    assert.deepEqual(lineage.members, history.at(-1)!.pool!.members);
    for (const id of lineage.members) {
      const skill = readText(path.join(out, 'pool', `${id}.md`));
      assert.equal(skillHash(skill), node(id)!.skill_hash, `${id}: its file holds its skill`);
      assert.equal(node(id)!.in_pool, true);
      assert.equal(node(id)!.item_scores!.length, 30, 'a score per selection item');
    }
    const best = skillHash(readText(path.join(out, 'best_skill.md')));
    assert.ok(
      lineage.members.some((id) => node(id)!.skill_hash === best),
      'the best skill is a member',
    );
    for (const n of lineage.nodes.filter((x) => !x.in_pool))
      assert.ok(fs.existsSync(path.join(out, n.skill_file)) || n.action.startsWith('skip'), `${n.id}: ${n.skill_file}`);
  });

  it('stopped by the budget and resumed, a pool run ends as the uninterrupted one', async () => {
    const out = path.join(tmpDir(), 'run');
    const stopped = await trainSim([...POOL, 'budget.max_calls=250'], out);
    assert.equal(stopped.outcome.status, 'stopped');
    const finished = await trainSim([...POOL, 'budget.max_calls=0'], out);
    assert.equal(finished.outcome.status, 'finished');
    const reference = await trainSim(POOL);
    assert.equal(historyOf(out), historyOf(reference.out));
    assert.deepEqual(lineageOf(out).members, lineageOf(reference.out).members);
  });

  it('off by default: no pool directory, no pool in the records', async () => {
    const { out, history } = await trainSim(['train.num_epochs=1']);
    assert.equal(fs.existsSync(path.join(out, 'pool')), false);
    assert.ok(history.every((r) => r.pool === undefined));
  });
});
