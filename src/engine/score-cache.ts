/**
 * Scores per (skill, item, target, sample): a rollout is never run twice. Appended to the run's
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
  trajectory: Trajectory;
}

export class ScoreCache {
  private readonly map = new Map<string, Trajectory>();
  private readonly out?: AppendFile;

  constructor(file?: string) {
    if (!file) return;
    this.out = new AppendFile(file);
    for (const line of readJsonLines<Line>(file)) this.map.set(this.key(line.skill, line.item, line.target, line.sample), line.trajectory);
  }

  private key(skill: string, item: string, target: string, sample: number): string {
    return `${skill}\u0000${item}\u0000${target}\u0000${sample}`;
  }

  close(): void {
    this.out?.close();
  }

  get(skill: string, item: string, target: string, sample = 0): Trajectory | undefined {
    return this.map.get(this.key(skill, item, target, sample));
  }

  set(skill: string, item: string, target: string, sample: number, trajectory: Trajectory): void {
    if (trajectory.error) return;
    this.map.set(this.key(skill, item, target, sample), trajectory);
    this.out?.append(JSON.stringify({ skill, item, target, sample, trajectory } satisfies Line));
  }
}
