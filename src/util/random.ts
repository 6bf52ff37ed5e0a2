/** Seeded randomness: the same seed gives the same sequence on every machine. */
import { createHash } from 'node:crypto';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/** A 32-bit seed from any list of parts (numbers, strings). */
export function seedFrom(...parts: (string | number)[]): number {
  return createHash('sha256').update(parts.join('\u241f')).digest().readInt32LE(0);
}

export class Rng {
  private readonly gen: ReturnType<typeof xoroshiro128plus>;

  constructor(seed: number | string) {
    this.gen = xoroshiro128plus(typeof seed === 'number' ? seed | 0 : seedFrom(seed));
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return uniformInt(this.gen, min, max);
  }

  /** A float in [0, 1). */
  float(): number {
    return uniformFloat64(this.gen);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}

/** A deterministic uniform number in [0, 1) for a key, without keeping a generator. */
export function unitHash(...parts: (string | number)[]): number {
  return (seedFrom(...parts) >>> 0) / 2 ** 32;
}
