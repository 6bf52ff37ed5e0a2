/**
 * Where a skill of a run came from, as its id in the run's files (`current_origin`,
 * `best_origin`, the pool's lineage): made and read back here only.
 */

const pad = (n: number, width: number) => String(n).padStart(width, '0');

export type Origin =
  | { kind: 'initial' }
  | { kind: 'step'; step: number }
  | { kind: 'merge'; step: number }
  | { kind: 'slow_update'; epoch: number }
  | { kind: 'slow_update_placeholder'; epoch: number };

export const INITIAL_ORIGIN = 'initial_skill';

/** The id of an origin, as the run's files spell it. */
export function originId(o: Origin): string {
  switch (o.kind) {
    case 'initial':
      return INITIAL_ORIGIN;
    case 'step':
      return `step_${pad(o.step, 4)}`;
    case 'merge':
      return `merge_${pad(o.step, 4)}`;
    case 'slow_update':
      return `slow_update_epoch_${pad(o.epoch, 2)}`;
    case 'slow_update_placeholder':
      return `slow_update_placeholder_epoch_${pad(o.epoch, 2)}`;
  }
}

const PATTERNS: [RegExp, (n: number) => Origin][] = [
  [/^step_(\d+)$/, (step) => ({ kind: 'step', step })],
  [/^merge_(\d+)$/, (step) => ({ kind: 'merge', step })],
  [/^slow_update_epoch_(\d+)$/, (epoch) => ({ kind: 'slow_update', epoch })],
  [/^slow_update_placeholder_epoch_(\d+)$/, (epoch) => ({ kind: 'slow_update_placeholder', epoch })],
];

/** The origin an id names; undefined for an id this version does not make. */
export function parseOrigin(id: string): Origin | undefined {
  if (id === INITIAL_ORIGIN) return { kind: 'initial' };
  for (const [pattern, make] of PATTERNS) {
    const m = pattern.exec(id);
    if (m) return make(Number(m[1]));
  }
  return undefined;
}
