import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildScheduler, NO_LIMIT, roundHalfEven } from '../../src/engine/lr-schedulers.ts';

const run = (mode: string, max: number, min: number, T: number, n = T) => {
  const s = buildScheduler(mode, max, min, T);
  return Array.from({ length: n }, () => s.step());
};

describe('learning-rate schedulers', () => {
  it('round half to even, as the original', () => {
    assert.deepEqual([0.5, 1.5, 2.5, 3.5, 2.4, 2.6].map(roundHalfEven), [0, 2, 2, 4, 2, 3]);
  });

  it('reproduce the reference sequences', () => {
    assert.deepEqual(run('linear', 10, 2, 4), [8, 6, 4, 2]);
    assert.deepEqual(run('cosine', 10, 2, 4), [9, 6, 3, 2]);
    assert.equal(run('cosine', 100, 0, 4)[0], 85);
    assert.equal(buildScheduler('cosine', 20, 2, 100).valueAt(50), 11);
    assert.deepEqual(
      run('cosine', 100, 0, 100).filter((_, i) => [0, 1, 99].includes(i)),
      [100, 100, 0],
    );
    assert.deepEqual(run('cosine', 4, 2, 8), [4, 4, 3, 3, 3, 2, 2, 2]);
    assert.deepEqual(run('linear', 4, 2, 4), [4, 3, 2, 2]);
    const searchqa = run('cosine', 4, 2, 40);
    assert.deepEqual(
      [
        searchqa.filter((v) => v === 4).length,
        searchqa.filter((v) => v === 3).length,
        searchqa.filter((v) => v === 2).length,
      ],
      [13, 13, 14],
    );
  });

  it('constant, autonomous, and short schedules', () => {
    assert.deepEqual(run('constant', 5, 2, 3), [5, 5, 5]);
    assert.deepEqual(run('autonomous', 5, 2, 3), [NO_LIMIT, NO_LIMIT, NO_LIMIT]);
    assert.deepEqual(run('linear', 7, 2, 1, 3), [7, 7, 7]);
    assert.deepEqual(run('cosine', 7, 2, 0, 2), [7, 7]);
  });

  it('plateaus at the minimum after T and never leaves [min, max]', () => {
    for (const mode of ['linear', 'cosine']) {
      const values = run(mode, 9, 3, 6, 10);
      assert.deepEqual(values.slice(6), [3, 3, 3, 3]);
      assert.ok(values.every((v) => v >= 3 && v <= 9));
      for (let i = 1; i < values.length; i++) assert.ok(values[i]! <= values[i - 1]!, 'monotone');
    }
  });

  it('resumes from its saved state, not from the step number', () => {
    const a = buildScheduler('cosine', 10, 2, 10);
    a.step();
    a.step();
    a.step();
    const b = buildScheduler('cosine', 10, 2, 10);
    b.load(a.state());
    assert.equal(b.step(), a.step());
    assert.deepEqual(b.state(), { current_step: 4 });
    const c = buildScheduler('linear', 10, 2, 10);
    c.load(undefined);
    assert.equal(c.step(), 9);
  });

  it('peek gives the budget the next step will get, without advancing', () => {
    for (const mode of ['constant', 'linear', 'cosine', 'autonomous']) {
      const s = buildScheduler(mode, 10, 2, 4);
      const peeked: number[] = [];
      const stepped: number[] = [];
      for (let i = 0; i < 5; i++) {
        peeked.push(s.peek(), s.peek());
        stepped.push(s.step());
      }
      assert.deepEqual(
        peeked,
        stepped.flatMap((v) => [v, v]),
        mode,
      );
      assert.deepEqual(stepped, run(mode, 10, 2, 4, 5), mode);
    }
  });

  it('refuses an unknown mode', () => {
    assert.throws(() => buildScheduler('warmup', 1, 1, 1), /unknown scheduler mode/);
  });
});
