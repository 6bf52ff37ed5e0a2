/**
 * Splits, steps and batches (reference §5): how many steps an epoch has and which training
 * items each step sees. Shuffles are seeded, so a run and its resume see the same batches.
 */
import type { Item } from '../envs/types.ts';
import { Rng } from '../util/random.ts';

export interface Schedule {
  trainSize: number;
  stepsPerEpoch: number;
  batchesPerEpoch: number;
  totalSteps: number;
}

export function schedule(trainSize: number, batchSize: number, accumulation: number, epochs: number): Schedule {
  const stepsPerEpoch = Math.ceil(trainSize / (batchSize * accumulation));
  return {
    trainSize,
    stepsPerEpoch,
    batchesPerEpoch: stepsPerEpoch * accumulation,
    totalSteps: stepsPerEpoch * epochs,
  };
}

export interface Batch {
  index: number;
  seed: number;
  items: Item[];
}

/** One pass over the training items: shuffled by `seed + epoch*1000`, cut into batches. */
export function planEpoch(
  train: Item[],
  epoch: number,
  seed: number,
  batchSize: number,
  batchesPerEpoch: number,
): Batch[] {
  const shuffled = new Rng(seed + epoch * 1000).shuffle(train);
  const batches: Batch[] = [];
  let cursor = 0;
  for (let index = 0; index < batchesPerEpoch; index++) {
    const batchSeed = seed + epoch * 1000 + index + 1;
    let items = shuffled.slice(cursor, cursor + batchSize);
    cursor += batchSize;
    if (items.length === 0 && train.length > 0) items = new Rng(batchSeed).shuffle(train).slice(0, batchSize);
    batches.push({ index, seed: batchSeed, items });
  }
  return batches;
}

/** `n` training items for the epoch-end comparisons, the same for every run of the config. */
export function sampleTrain(train: Item[], n: number, seed: number): Item[] {
  return new Rng(seed).shuffle(train).slice(0, n);
}

/** The first `n` items (all when n is 0 or too large), in file order, as the original. */
export function firstN<T>(items: T[], n: number): T[] {
  return n > 0 && n < items.length ? items.slice(0, n) : items;
}

/** The order in which a batch's trajectories are cut into minibatches (and its rollouts started): seeded by the batch, not by timing. */
export function reflectionOrder(batch: Batch): number[] {
  return new Rng(batch.seed).shuffle(batch.items.map((_, i) => i));
}

/** Each step's batches in `epoch` (`accumulation` batches per step), as the run's settings cut them. */
export function epochSteps(
  train: Item[],
  epoch: number,
  settings: { seed: number; batchSize: number; accumulation: number },
  plan: Pick<Schedule, 'stepsPerEpoch' | 'batchesPerEpoch'>,
): Batch[][] {
  const batches = planEpoch(train, epoch, settings.seed, settings.batchSize, plan.batchesPerEpoch);
  const a = settings.accumulation;
  return Array.from({ length: plan.stepsPerEpoch }, (_, s) => batches.slice(s * a, (s + 1) * a));
}
