/**
 * Train / val / test by hash: a task's split depends only on its id and the seed, so the same
 * task lands in the same split night after night. Dream (synthetic) tasks always train. With two
 * real tasks or more, val and train are never empty: the task with the smallest hash moves over.
 * A task the hash puts in test is never moved.
 */
import { sha256Hex, type TaskRecord, type TaskSplit } from '../tasks/task.ts';

/** Python's `round`: halves to the even neighbour (so fractions give the original's cuts). */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The task's bucket in [0, 100): the SHA-256 of `seed + id` as a number, modulo 100. */
export function splitBucket(seed: number, id: string): number {
  return Number(BigInt(`0x${sha256Hex(`${seed}${id}`)}`) % 100n);
}

export function checkFractions(val: number, test: number): void {
  for (const [name, v] of [
    ['val_fraction', val],
    ['test_fraction', test],
  ] as const) {
    if (!(v >= 0 && v <= 1)) throw new RangeError(`${name} must be between 0 and 1, got ${v}`);
  }
  if (val + test >= 1)
    throw new RangeError(
      `val_fraction + test_fraction must be below 1 (nothing would be left to train on), got ${val} + ${test}`,
    );
}

export function assignSplits(
  tasks: TaskRecord[],
  fractions: { val: number; test: number; seed: number },
): TaskRecord[] {
  checkFractions(fractions.val, fractions.test);
  const valCut = roundHalfEven(fractions.val * 100);
  const testCut = valCut + roundHalfEven(fractions.test * 100);
  const out = tasks.map((t) => {
    if (t.origin === 'dream') return { ...t, split: 'train' as TaskSplit };
    const b = splitBucket(fractions.seed, t.id);
    return { ...t, split: (b < valCut ? 'val' : b < testCut ? 'test' : 'train') as TaskSplit };
  });
  const real = out.filter((t) => t.origin !== 'dream');
  if (real.length >= 2) {
    const first = (split: TaskSplit) =>
      real
        .filter((t) => t.split === split)
        .sort((a, b) => {
          const ha = sha256Hex(`${fractions.seed}${a.id}`);
          const hb = sha256Hex(`${fractions.seed}${b.id}`);
          return ha < hb ? -1 : ha > hb ? 1 : a.id < b.id ? -1 : 1;
        })[0];
    if (!real.some((t) => t.split === 'val')) {
      const moved = first('train');
      if (moved) moved.split = 'val';
    }
    if (!real.some((t) => t.split === 'train')) {
      const moved = first('val');
      if (moved && real.filter((t) => t.split === 'val').length >= 2) moved.split = 'train';
    }
  }
  return out;
}
