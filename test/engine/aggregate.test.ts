import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  aggregate,
  aggregateCombined,
  mergeGroup,
  mergeHierarchy,
  type Merged,
} from '../../src/engine/stages/aggregate.ts';
import { InfraError } from '../../src/model/types.ts';
import { scriptedModel } from '../helpers/models.ts';
import { optimizerContext } from '../helpers/optimizer.ts';

const patch = (...contents: string[]): Merged => ({
  reasoning: 'r',
  items: contents.map((c) => ({ op: 'append', content: c })),
});
const contents = (m: Merged | null) => (m?.items ?? []).map((i) => (i as { content: string }).content);

/** A merger that concatenates, so that the structure of the calls can be checked. */
function concatenating() {
  return scriptedModel((req) => {
    const meta = req.meta as { patches: { items: unknown[] }[] };
    return JSON.stringify({ reasoning: 'merged', edits: meta.patches.flatMap((p) => p.items) });
  });
}

describe('merge fallback', () => {
  it('a failing merge call falls back to concatenation in order, with a warning that leaks nothing', async () => {
    // A call that failed at the provider after its retries, as the scheduler reports it.
    const model = scriptedModel(
      () => new InfraError('connection refused: Authorization: Bearer sk-secret-token', 'network', 5),
    );
    const ctx = optimizerContext(model);
    const merged = await mergeGroup(
      { ctx, skill: 'S', metaSkill: '', groupSize: 4 },
      [patch('a'), patch('b')],
      2,
      'failure',
    );
    assert.equal(merged.reasoning, 'fallback concatenation');
    assert.deepEqual(contents(merged), ['a', 'b']);
    assert.ok(merged.items.every((i) => (i as { merge_level?: number }).merge_level === 2));
    assert.equal(ctx.warnings.length, 1);
    assert.match(ctx.warnings[0]!, /batch merge/);
    assert.doesNotMatch(ctx.warnings.join(' '), /sk-secret-token/);
  });

  it('unusable replies fall back too: prose, a null list, a list of non-objects', async () => {
    for (const reply of [
      'I merged them nicely.',
      '{"reasoning": "x", "edits": null}',
      '{"reasoning": "x", "edits": ["not an object"]}',
    ]) {
      const ctx = optimizerContext(scriptedModel(() => reply));
      const merged = await mergeGroup(
        { ctx, skill: 'S', metaSkill: '', groupSize: 4 },
        [patch('f1'), patch('s1')],
        0,
        'final',
      );
      assert.equal(merged.reasoning, 'fallback: failure first, then success', reply);
      assert.deepEqual(contents(merged), ['f1', 's1']);
      assert.match(ctx.warnings[0]!, /final merge/);
    }
  });

  it('bad bookkeeping fields in an item do not spoil the reply', async () => {
    const ctx = optimizerContext(
      scriptedModel(
        () =>
          '{"reasoning": "r", "edits": [{"op": "append", "content": "x", "support_count": "3", "source_type": "both", "merge_level": "deep"}]}',
      ),
    );
    const merged = await mergeGroup(
      { ctx, skill: 'S', metaSkill: '', groupSize: 4 },
      [patch('a'), patch('b')],
      1,
      'failure',
    );
    assert.deepEqual(contents(merged), ['x']);
    assert.equal((merged.items[0] as { support_count: number }).support_count, 3);
    assert.equal((merged.items[0] as { source_type?: string }).source_type, undefined);
    assert.equal(ctx.warnings.length, 0);
  });

  it('a valid reply is used, with merge levels set', async () => {
    const ctx = optimizerContext(
      scriptedModel(
        () => '```json\n{"reasoning": "dedup", "edits": [{"op": "append", "content": "x", "support_count": 2}]}\n```',
      ),
    );
    const merged = await mergeGroup(
      { ctx, skill: 'S', metaSkill: 'notes', groupSize: 4 },
      [patch('x'), patch('x')],
      1,
      'failure',
    );
    assert.deepEqual(contents(merged), ['x']);
    assert.equal((merged.items[0] as { merge_level: number }).merge_level, 1);
    assert.match(
      String((ctx.optimizer as ReturnType<typeof scriptedModel>).requests[0]!.messages[0]!.content),
      /## Optimizer Meta Skill/,
    );
  });
});

describe('hierarchical merge', () => {
  it('merges in groups level by level, one call per group of two or more', async () => {
    const model = concatenating();
    const ctx = optimizerContext(model);
    const patches = ['a', 'b', 'c', 'd', 'e'].map((c) => Promise.resolve(patch(c)));
    const merged = await mergeHierarchy({ ctx, skill: 'S', metaSkill: '', groupSize: 2 }, patches, 'failure');
    assert.deepEqual(contents(merged), ['a', 'b', 'c', 'd', 'e']);
    // level 1: [a,b] [c,d] [e] -> 2 calls; level 2: [ab, cd] [e] -> 1 call; level 3: [abcd, e] -> 1 call
    assert.equal(model.requests.length, 4);
  });

  it('a group size under 2 still terminates, and nothing is lost', async () => {
    for (const size of [0, 1]) {
      const ctx = optimizerContext(concatenating());
      const merged = await mergeHierarchy(
        { ctx, skill: 'S', metaSkill: '', groupSize: size },
        ['a', 'b', 'c'].map((c) => Promise.resolve(patch(c))),
        'failure',
      );
      assert.deepEqual(contents(merged), ['a', 'b', 'c']);
    }
  });

  it('one patch passes through without a call; empty patches count as none', async () => {
    const model = concatenating();
    const ctx = optimizerContext(model);
    const one = await mergeHierarchy(
      { ctx, skill: 'S', metaSkill: '', groupSize: 4 },
      [Promise.resolve(patch('a')), Promise.resolve(null), Promise.resolve(patch())],
      'failure',
    );
    assert.deepEqual(contents(one), ['a']);
    assert.equal(model.requests.length, 0);
    assert.equal(await mergeHierarchy({ ctx, skill: 'S', metaSkill: '', groupSize: 4 }, [], 'failure'), null);
  });

  it('a group starts merging as soon as its own patches are done', async () => {
    const model = concatenating();
    const ctx = optimizerContext(model);
    let release!: (m: Merged) => void;
    const late = new Promise<Merged>((r) => (release = r));
    const run = mergeHierarchy(
      { ctx, skill: 'S', metaSkill: '', groupSize: 2 },
      [Promise.resolve(patch('a')), Promise.resolve(patch('b')), late, Promise.resolve(patch('d'))],
      'failure',
    );
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(model.requests.length, 1, 'the first group merged while the second waited');
    release(patch('c'));
    assert.deepEqual(contents(await run), ['a', 'b', 'c', 'd']);
  });

  it('final merge only when both groups have items, failure first in the fallback', async () => {
    const model = scriptedModel(() => new InfraError('down', 'server', 5));
    const ctx = optimizerContext(model);
    const s = { ctx, skill: 'S', metaSkill: '', groupSize: 4 };
    assert.deepEqual(contents(await aggregate(s, [Promise.resolve(patch('f'))], [])), ['f']);
    assert.deepEqual(contents(await aggregate(s, [], [Promise.resolve(patch('s'))])), ['s']);
    assert.equal(model.requests.length, 0);
    assert.deepEqual((await aggregate(s, [], [])).items, []);
    assert.deepEqual(contents(await aggregate(s, [Promise.resolve(patch('f'))], [Promise.resolve(patch('s'))])), [
      'f',
      's',
    ]);
    assert.equal(model.requests.length, 1, 'one final merge call, which failed');
  });
});

describe('combined merge', () => {
  const meta = (req: { meta?: unknown }) =>
    req.meta as { level: string; budget?: number; patches: { items: { content: string }[]; source?: string }[] };
  const message = (req: { messages: { content: unknown }[] }) => String(req.messages[0]!.content);
  const resolved = (...cs: string[]) => cs.map((c) => Promise.resolve(patch(c)));

  it('when every patch fits in one group: one call merges both kinds, failures first, ordered for the budget', async () => {
    const model = concatenating();
    const ctx = optimizerContext(model);
    const merged = await aggregateCombined(
      { ctx, skill: 'S', metaSkill: '', groupSize: 4 },
      resolved('f1', 'f2'),
      resolved('s1', 's2'),
      3,
    );
    assert.equal(model.requests.length, 1, 'no separate failure, success and final merges');
    const [req] = model.requests;
    assert.equal(meta(req!).level, 'top');
    assert.deepEqual(
      meta(req!).patches.map((p) => p.source),
      ['failure', 'failure', 'success', 'success'],
    );
    assert.match(message(req!), /Only the first 3 edits of your list are applied this step/);
    assert.match(message(req!), /"source_type": "success"/);
    assert.match(String(req!.system), /failed trajectories fix errors and have priority/);
    assert.deepEqual(contents(merged), ['f1', 'f2', 's1', 's2']);
    assert.equal(merged.rankedFor, 3);
  });

  it('merges each kind only until both fit in one group, then once on top', async () => {
    const model = concatenating();
    const ctx = optimizerContext(model);
    // 6 failure and 3 success patches, groups of 4: failures [4][2] -> 2 nodes; 2 + 3 > 4, so successes [3] -> 1; then the top merges 3.
    const merged = await aggregateCombined(
      { ctx, skill: 'S', metaSkill: '', groupSize: 4 },
      resolved('a', 'b', 'c', 'd', 'e', 'f'),
      resolved('x', 'y', 'z'),
      2,
    );
    assert.deepEqual(contents(merged), ['a', 'b', 'c', 'd', 'e', 'f', 'x', 'y', 'z']);
    assert.deepEqual(
      model.requests.map((r) => meta(r).level),
      ['failure', 'failure', 'success', 'top'],
    );
    assert.deepEqual(
      meta(model.requests.at(-1)!).patches.map((p) => p.source),
      ['failure', 'failure', 'success'],
    );
    // The staged strategy: three merge calls in sequence for the same patches (two failure levels, the final merge), then a ranking.
    const staged = concatenating();
    await aggregate(
      { ctx: optimizerContext(staged), skill: 'S', metaSkill: '', groupSize: 4 },
      resolved('a', 'b', 'c', 'd', 'e', 'f'),
      resolved('x', 'y', 'z'),
    );
    assert.deepEqual(
      staged.requests.map((r) => meta(r).level),
      ['failure', 'failure', 'success', 'failure', 'final'],
    );
  });

  it('a single usable patch passes through unranked; none gives an empty list; a failed top merge concatenates failures first', async () => {
    const model = scriptedModel(() => new InfraError('down', 'server', 5));
    const ctx = optimizerContext(model);
    const s = { ctx, skill: 'S', metaSkill: '', groupSize: 4 };
    const one = await aggregateCombined(s, [Promise.resolve(null)], resolved('s'), 2);
    assert.deepEqual(contents(one), ['s']);
    assert.equal(one.rankedFor, undefined, 'the select stage ranks it if it has too many items');
    assert.deepEqual((await aggregateCombined(s, [], [Promise.resolve(patch())], 2)).items, []);
    assert.equal(model.requests.length, 0);
    const fallback = await aggregateCombined(s, resolved('f'), resolved('s'), 2);
    assert.deepEqual(contents(fallback), ['f', 's']);
    assert.equal(fallback.rankedFor, undefined);
    assert.match(ctx.warnings[0]!, /combined merge/);
  });

  it('without a budget known in advance (the optimizer chooses it), the top merge does not rank', async () => {
    const model = concatenating();
    const merged = await aggregateCombined(
      { ctx: optimizerContext(model), skill: 'S', metaSkill: '', groupSize: 4 },
      resolved('f'),
      resolved('s'),
      undefined,
    );
    assert.equal(merged.rankedFor, undefined);
    assert.doesNotMatch(message(model.requests[0]!), /## Budget/);
    assert.equal(meta(model.requests[0]!).budget, undefined);
  });
});
