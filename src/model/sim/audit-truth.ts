/**
 * The simulator's own truth about a brittle candidate, for the tests and the bench that judge the
 * audit's probes: how much of its gain the brittle rules it adds make, found by taking them out
 * and answering every selection item as the simulated target would (noise off). The probes only
 * sample this; it is not available outside the simulator.
 */
import { countTokens } from '../../skill/document.ts';
import { applicableSkill, isBrittle } from './audit-plants.ts';
import { answer, expectedAnswer, type SimTask } from './world.ts';

/** How many of `tasks` the simulated target answers right under `skill` (`prompt`: the system prompt the env builds from it). */
export function solved(skill: string, tasks: readonly SimTask[], prompt: (skill: string) => string): number {
  const system = prompt(skill);
  return tasks.filter((t) => {
    const applied = applicableSkill(system, t.question);
    return answer(t, applied, { tokens: () => countTokens(system), skillKey: system }) === expectedAnswer(t);
  }).length;
}

/**
 * `candidate`'s gain over `start` on `tasks`, in items, and the share of it lost when the brittle
 * rules it adds are taken out.
 */
export function brittleShare(
  candidate: string,
  start: string,
  tasks: readonly SimTask[],
  prompt: (skill: string) => string,
): { gain: number; share: number } {
  const before = solved(start, tasks, prompt);
  const gain = solved(candidate, tasks, prompt) - before;
  if (gain <= 0) return { gain, share: 0 };
  const had = new Set(start.split('\n'));
  const without = candidate
    .split('\n')
    .filter((l) => !isBrittle(l) || had.has(l))
    .join('\n');
  return { gain, share: Math.max(0, gain - (solved(without, tasks, prompt) - before)) / gain };
}
