import type { TestContext } from 'node:test';
import { Rng } from '../../src/util/random.ts';

/** Kill moments besides the first and the last, when not every one is asked for. */
const SAMPLED = 6;

/**
 * The steps (1..`steps`) at which a kill test kills its child: the first, the last and a few
 * drawn at random between, from a seed printed so that a failure can be run again
 * (`SKILLOPT_TEST_SEED`); every step with `SKILLOPT_TEST_KILL_ALL=1`.
 */
export function killMoments(t: TestContext, steps: number): number[] {
  const all = Array.from({ length: steps }, (_, i) => i + 1);
  if (process.env.SKILLOPT_TEST_KILL_ALL === '1' || steps <= SAMPLED + 2) return all;
  const seed = Number(process.env.SKILLOPT_TEST_SEED ?? Date.now() % 1e9);
  t.diagnostic(`kill moments drawn with SKILLOPT_TEST_SEED=${seed} (every one: SKILLOPT_TEST_KILL_ALL=1)`);
  const middle = new Rng(seed).shuffle(all.slice(1, -1)).slice(0, SAMPLED);
  return [1, ...middle.sort((a, b) => a - b), steps];
}
