/**
 * The forward pass: the target runs items under a skill, concurrently, through the env. Each
 * result is scored by the env; a failure of the model or of its reply on one item (after its
 * retries) becomes a trajectory with `error` (kept out of scores); anything else stops the
 * run once the items in flight are done: a fatal model error (bad key, unknown model), a
 * problem in the user's input, a stop asked for (budget, a provider's wait), and a bug of ours.
 * Finished rollouts come from the score cache; a rollout directory gets `results.jsonl` and
 * each item's conversation.
 */
import path from 'node:path';
import type { LimitFunction } from 'p-limit';
import { redactText } from '../../config/redact.ts';
import type { Env, Item, Trajectory } from '../../envs/types.ts';
import { CallFailure } from '../../model/failure.ts';
import { StructuredOutputError } from '../../model/structured.ts';
import { carried } from '../../model/attribution.ts';
import { InfraError, type ChatModel } from '../../model/types.ts';
import { writeFileAtomic } from '../../run/atomic.ts';
import { asPackage, skillId, type Skill } from '../../skill/package/package.ts';
import { packageTarget } from '../../model/package-target.ts';
import type { ScoreCache } from '../scoring/score-cache.ts';

export interface RolloutJob {
  env: Env;
  target: ChatModel;
  judge?: ChatModel;
  skill: Skill;
  items: Item[];
  /** Shared concurrency limit of the run's rollouts. */
  limit: LimitFunction;
  cache: ScoreCache;
  seed: number;
  sample?: number;
  /** The sample of each item (repeated samples of one item are several entries); overrides `sample`. */
  samples?: readonly number[];
  /** A training step's rollout: the env may give the target feedback it does not get in evaluation. */
  training?: boolean;
  /** Where to write `results.jsonl` and `predictions/<id>/conversation.json`. */
  dir?: string;
  /** Order in which items are started (indices into `items`); default: as given. */
  order?: number[];
  /** Called as each item finishes (cached ones included), in completion order. */
  onResult?: (trajectory: Trajectory, index: number) => void;
  /** Checked before an item starts: true stops launching more. */
  stop?: () => boolean;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

export interface RolloutResult {
  /** In item order; undefined for items never started (stopped early). */
  trajectories: (Trajectory | undefined)[];
  /** Rollouts run now (not from the cache). */
  ran: number;
  cached: number;
}

/** What a run's rollouts share: one env, target, judge, concurrency limit and score cache. */
export type RolloutServices = Pick<RolloutJob, 'env' | 'target' | 'judge' | 'limit' | 'cache'>;

/** The run's rollouts, bound once to its services; `seed` is the run's, unless a call gives its own. */
export class Rollouts {
  constructor(
    readonly services: RolloutServices,
    readonly seed: number,
  ) {}

  get targetId(): string {
    return this.services.target.id;
  }

  run(
    skill: Skill,
    items: Item[],
    options: Omit<RolloutJob, keyof RolloutServices | 'skill' | 'items' | 'seed'> & { seed?: number } = {},
  ): Promise<RolloutResult> {
    return rollout({ ...this.services, seed: this.seed, ...options, skill, items });
  }

  /** The finished rollout of `skill` on `item` (its `sample`) at the run's seed, when the score cache has it. */
  cached(skillHashValue: string, item: Item, sample = 0): Trajectory | undefined {
    return this.services.cache.get(skillHashValue, item.id, this.services.target.id, sample, this.seed);
  }
}

/** The item error of a model failure on one item, or undefined for errors that must stop the run. */
export function itemError(item: Item, err: unknown): Trajectory | undefined {
  let kind: string;
  if (err instanceof InfraError || err instanceof CallFailure) kind = err.kind;
  else if (err instanceof StructuredOutputError) kind = 'bad_response';
  else return undefined;
  // The message goes to results.jsonl and scores.jsonl; a provider may echo a key in it.
  return { id: item.id, hard: 0, soft: 0, taskType: item.type, error: { kind, message: redactText(err.message) } };
}

export async function rollout(job: RolloutJob): Promise<RolloutResult> {
  const hash = skillId(job.skill);
  const pkg = asPackage(job.skill);
  // A package's other files travel with the target's requests; a single document's requests are as before.
  const target = packageTarget(job.target, pkg);
  const sampleOf = (index: number) => job.samples?.[index] ?? job.sample ?? 0;
  const order = job.order ?? job.items.map((_, i) => i);
  const trajectories: (Trajectory | undefined)[] = new Array(job.items.length).fill(undefined);
  let ran = 0;
  let cached = 0;
  let done = 0;
  let stopped = false;

  const finish = (index: number, t: Trajectory) => {
    trajectories[index] = t;
    done++;
    job.onResult?.(t, index);
    job.onProgress?.(done, job.items.length);
  };

  // Cached items first, in order, so that early-stopping callers see them before any call.
  const pending: { index: number; item: Item }[] = [];
  for (const index of order) {
    const item = job.items[index];
    if (!item) throw new Error(`rollout order names item ${index}, of ${job.items.length}`);
    const hit = job.cache.get(hash, item.id, job.target.id, sampleOf(index), job.seed);
    if (hit) {
      cached++;
      finish(index, hit);
    } else pending.push({ index, item });
  }

  let fatal: { error: unknown } | undefined;
  await Promise.all(
    pending.map(({ index, item }) =>
      // Carried: the rollout's calls are recorded as made for the work that queued it, whichever frees its turn.
      job.limit(
        carried(async () => {
          if (fatal || stopped || job.signal?.aborted) return;
          if (job.stop?.()) {
            stopped = true;
            return;
          }
          let t: Trajectory;
          const sample = sampleOf(index);
          // Another caller may have finished this rollout while this one waited its turn.
          const late = job.cache.get(hash, item.id, job.target.id, sample, job.seed);
          if (late) {
            cached++;
            finish(index, late);
            return;
          }
          try {
            const shared = job.cache.once(hash, item.id, job.target.id, sample, job.seed, () =>
              job.env.rollout(item, pkg.skill, {
                target,
                judge: job.judge,
                seed: job.seed,
                sample,
                training: job.training,
                signal: job.signal,
              }),
            );
            if (shared.fresh) ran++;
            else cached++;
            t = await shared.trajectory;
          } catch (err) {
            const failed = itemError(item, err);
            if (!failed) {
              fatal ??= { error: err };
              return;
            }
            t = failed;
          }
          finish(index, t);
        }),
      ),
    ),
  );
  if (fatal) throw fatal.error;
  if (job.dir)
    writeRolloutDir(
      job.dir,
      trajectories,
      hash,
      job.target.id,
      job.items.map((_, i) => sampleOf(i)),
    );
  return { trajectories, ran, cached };
}

/**
 * `results.jsonl` in item order, one line per item with its conversation (and an agent target's
 * traces): one file per rollout
 * directory rather than one per item (the original writes `predictions/<id>/conversation.json`,
 * which costs a directory and a file per rollout).
 */
export function writeRolloutDir(
  dir: string,
  trajectories: (Trajectory | undefined)[],
  hash: string,
  target: string,
  samples: number | readonly number[],
): void {
  const lines: string[] = [];
  for (const [i, t] of trajectories.entries()) {
    if (!t) continue;
    const sample = typeof samples === 'number' ? samples : (samples[i] ?? 0);
    lines.push(
      JSON.stringify({
        id: t.id,
        hard: t.hard,
        soft: t.soft,
        task_type: t.taskType,
        task: t.task,
        predicted_answer: t.predicted,
        expected: t.expected,
        fail_reason: t.failReason,
        feedback: t.feedback,
        ...(t.error ? { error: t.error } : {}),
        skill_hash: hash,
        target,
        sample,
        ...(t.conversation ? { conversation: t.conversation } : {}),
        ...(t.traces?.length ? { traces: t.traces } : {}),
      }),
    );
  }
  writeFileAtomic(path.join(dir, 'results.jsonl'), lines.length ? `${lines.join('\n')}\n` : '', { durable: false });
}
