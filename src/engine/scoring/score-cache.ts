/**
 * Scores per (skill, item, target, sample, seed): a rollout is never run twice. The seed is part
 * of the key because an env may use it (LiveMath shuffles the options with it). Appended to the run's
 * `scores.jsonl` as each rollout finishes, so a resumed run reuses every finished rollout.
 * Infrastructure errors are not cached (they are retried).
 *
 * Long strings of a trajectory (the system prompt holds the whole skill) are stored once in the
 * run's `blobs/`; memory holds where each entry's line is in `scores.jsonl`, and reads the line and
 * its blobs back on a hit.
 */
import { z } from 'zod';
import type { Trajectory } from '../../envs/types.ts';
import { AppendFile, LineAt, jsonLines } from '../../run/atomic.ts';
import { BlobMissingError, BlobStore, fromJournalLine, toJournalLine } from '../../run/blobs.ts';

const LineSchema = z
  .object({
    skill: z.string(),
    item: z.string(),
    target: z.string(),
    sample: z.number(),
    seed: z.number().optional(),
    trajectory: z.object({ id: z.string(), hard: z.number(), soft: z.number() }).loose(),
  })
  .loose();
type Line = z.infer<typeof LineSchema>;
const TRAJECTORY = '/trajectory/';
/** An agent target's traces are many short strings: stored whole when long. */
const WHOLE = ['traces'];

export class ScoreCache {
  /** Where the stored line (JSON, long strings in blobs) of each key is; trajectories themselves when there is no file. */
  private readonly map = new Map<string, LineAt | string | Trajectory>();
  private readonly running = new Map<string, Promise<Trajectory>>();
  private readonly out?: AppendFile;
  private readonly blobs?: BlobStore;

  constructor(file?: string) {
    if (!file) return;
    this.out = new AppendFile(file);
    this.blobs = BlobStore.beside(file);
    for (const { value, at } of jsonLines(file)) {
      const parsed = LineSchema.safeParse(value);
      if (!parsed.success) continue;
      const line = parsed.data;
      // Lines of earlier versions hold the long strings inline: they move to blobs here.
      const moved = line.blobs ? undefined : toJournalLine(line, this.blobs, TRAJECTORY, WHOLE);
      this.map.set(
        this.key(line.skill, line.item, line.target, line.sample, line.seed ?? 0),
        moved?.blobs ? JSON.stringify(moved) : at,
      );
    }
  }

  private key(skill: string, item: string, target: string, sample: number, seed: number): string {
    return `${skill}\u0000${item}\u0000${target}\u0000${sample}\u0000${seed}`;
  }

  close(): void {
    this.out?.close();
  }

  get(skill: string, item: string, target: string, sample = 0, seed = 0): Trajectory | undefined {
    const key = this.key(skill, item, target, sample, seed);
    const stored = this.map.get(key);
    if (stored === undefined || (typeof stored !== 'string' && !(stored instanceof LineAt))) return stored;
    try {
      const text = stored instanceof LineAt ? this.out!.read(stored) : stored;
      return fromJournalLine<Line>(JSON.parse(text), this.blobs!).trajectory as Trajectory;
    } catch (err) {
      // A blob of this entry is gone: the rollout is run again rather than trusted half.
      if (!(err instanceof BlobMissingError)) throw err;
      this.map.delete(key);
      return undefined;
    }
  }

  set(skill: string, item: string, target: string, sample: number, trajectory: Trajectory, seed = 0): void {
    if (trajectory.error) return;
    const key = this.key(skill, item, target, sample, seed);
    if (!this.out) {
      this.map.set(key, trajectory);
      return;
    }
    const line = JSON.stringify(
      toJournalLine({ skill, item, target, sample, seed, trajectory }, this.blobs!, TRAJECTORY, WHOLE),
    );
    this.map.set(key, this.out.append(line));
  }

  /**
   * Runs a rollout once even when two callers ask for it at the same time (the initial and the
   * best skill on the test split, when they are the same skill): the second waits for the first.
   */
  once(
    skill: string,
    item: string,
    target: string,
    sample: number,
    seed: number,
    run: () => Promise<Trajectory>,
  ): { trajectory: Promise<Trajectory>; fresh: boolean } {
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
