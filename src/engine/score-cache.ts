/**
 * Scores per (skill, item, target, sample, seed): a rollout is never run twice. The seed is part
 * of the key because an env may use it (LiveMath shuffles the options with it). Appended to the run's
 * `scores.jsonl` as each rollout finishes, so a resumed run reuses every finished rollout.
 * Infrastructure errors are not cached (they are retried).
 */
import type { Trajectory } from '../envs/types.ts';
import { AppendFile, readJsonLines } from '../run/atomic.ts';

interface Line {
  skill: string;
  item: string;
  target: string;
  sample: number;
  seed?: number;
  trajectory: Trajectory;
}

export class ScoreCache {
  private readonly map = new Map<string, Trajectory>();
  private readonly running = new Map<string, Promise<Trajectory>>();
  private readonly out?: AppendFile;

  constructor(file?: string) {
    if (!file) return;
    this.out = new AppendFile(file);
    for (const line of readJsonLines<Line>(file)) this.map.set(this.key(line.skill, line.item, line.target, line.sample, line.seed ?? 0), line.trajectory);
  }

  private key(skill: string, item: string, target: string, sample: number, seed: number): string {
    return `${skill}\u0000${item}\u0000${target}\u0000${sample}\u0000${seed}`;
  }

  close(): void {
    this.out?.close();
  }

  get(skill: string, item: string, target: string, sample = 0, seed = 0): Trajectory | undefined {
    return this.map.get(this.key(skill, item, target, sample, seed));
  }

  set(skill: string, item: string, target: string, sample: number, trajectory: Trajectory, seed = 0): void {
    if (trajectory.error) return;
    this.map.set(this.key(skill, item, target, sample, seed), trajectory);
    this.out?.append(JSON.stringify({ skill, item, target, sample, seed, trajectory } satisfies Line));
  }

  /**
   * Runs a rollout once even when two callers ask for it at the same time (the initial and the
   * best skill on the test split, when they are the same skill): the second waits for the first.
   */
  once(skill: string, item: string, target: string, sample: number, seed: number, run: () => Promise<Trajectory>): { trajectory: Promise<Trajectory>; fresh: boolean } {
    const key = this.key(skill, item, target, sample, seed);
    const pending = this.running.get(key);
    if (pending) return { trajectory: pending, fresh: false };
    const trajectory = run()
      .then((t) => {
        this.set(skill, item, target, sample, t, seed);
        return t;
      })
      .finally(() => this.running.delete(key));
    this.running.set(key, trajectory);
    return { trajectory, fresh: true };
  }
}
