import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Origin, originId, parseOrigin } from '../../src/run/origins.ts';

describe("a skill's origin id", () => {
  it('is read back as the origin it was made from', () => {
    const origins: Origin[] = [
      { kind: 'initial' },
      { kind: 'step', step: 7 },
      { kind: 'step', step: 12345 },
      { kind: 'merge', step: 3 },
      { kind: 'slow_update', epoch: 2 },
      { kind: 'slow_update_placeholder', epoch: 1 },
    ];
    for (const o of origins) assert.deepEqual(parseOrigin(originId(o)), o);
    assert.deepEqual(
      origins.map(originId),
      [
        'initial_skill',
        'step_0007',
        'step_12345',
        'merge_0003',
        'slow_update_epoch_02',
        'slow_update_placeholder_epoch_01',
      ],
      'spelled as the run files of earlier versions spell them',
    );
  });

  it('is unknown for ids this version does not make', () => {
    for (const id of ['', 'step_', 'step_x', 'initial', 'slow_update_epoch_', 'best'])
      assert.equal(parseOrigin(id), undefined);
  });
});
