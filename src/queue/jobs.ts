/**
 * What goes through Redis between a trainer and its workers: the run's spec (once per run), the
 * skills by hash, and per rollout a job and its outcome. A job names its inputs by id and hash;
 * the worker reads the rest from Redis and from its own copy of the data.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Trajectory } from '../envs/types.ts';
import type { CallRecord } from '../model/ledger.ts';

/** The one queue of rollout jobs (several runs may share it: each job names its run). */
export const QUEUE_NAME = 'skillopt-rollouts';
/** BullMQ's key prefix, and ours beside it. */
export const KEY_PREFIX = 'skillopt';

export const runSpecKey = (run: string) => `${KEY_PREFIX}:run:${run}`;
export const skillKey = (hash: string) => `${KEY_PREFIX}:skill:${hash}`;
/** Run specs and skills outlive a run's jobs by this long (a resumed trainer finds them again). */
export const KEEP_SECONDS = 7 * 24 * 3600;

/**
 * What a worker builds a run from. It names the config file and carries only the run's plain
 * settings; the code the run uses (env, scorer, programs), its files and where its requests go
 * are the worker's own: from its copy of that config file, in its own project directory, with
 * its own environment. Whoever can write to Redis can thus choose among the worker's configs and
 * settings, never make it run other code or send its keys elsewhere.
 */
export const RunSpecSchema = z.object({
  /** The project version the trainer runs: a worker of another version refuses its jobs. */
  version: z.string(),
  /** The config file, relative to the trainer's project directory (the same on every worker). */
  config: z.string(),
  /** The run's resolved settings (`config/key-kinds.ts`), applied over the worker's copy of the config. */
  settings: z.record(z.string(), z.unknown()),
  /**
   * A digest of every other value of the env and of the target and judge roles (paths,
   * programs, endpoints): the worker's copy must give the same, or it refuses the run, naming the keys.
   */
  pinned: z.record(z.string(), z.string()),
});
export type RunSpec = z.infer<typeof RunSpecSchema>;

export const RolloutJobSchema = z.object({
  run: z.string(),
  /** `skillHash` of the skill text, stored under `skillKey`. */
  skill: z.string(),
  item: z.string(),
  /** The target model's id, as the trainer sees it: a worker whose target differs refuses the job. */
  target: z.string(),
  seed: z.number().int(),
  sample: z.number().int(),
  training: z.boolean(),
});
export type RolloutJobData = z.infer<typeof RolloutJobSchema>;

/**
 * How a rollout that returned no trajectory ended, so that the trainer stops as it would for a
 * local one (a failed model call on one item comes back as a trajectory with `error`).
 */
export const JobErrorSchema = z.object({
  /** fatal: a model error that stops the run; stop: a limit or a provider's long wait; other: anything else. */
  type: z.enum(['fatal', 'stop', 'other']),
  kind: z.string(),
  message: z.string(),
});
export type JobError = z.infer<typeof JobErrorSchema>;

const CallSchema = z
  .object({
    key: z.string(),
    role: z.string(),
    model: z.string(),
    purpose: z.string(),
    from: z.enum(['provider', 'cache', 'journal']),
    usage: z.object({ input: z.number(), output: z.number(), cached: z.number(), reasoning: z.number() }).loose(),
    cost_usd: z.number().nullable(),
  })
  .loose();

export const RolloutOutcomeSchema = z.object({
  trajectory: z.object({ id: z.string(), hard: z.number(), soft: z.number() }).loose().optional(),
  error: JobErrorSchema.optional(),
  /** Every model call the rollout made, with its reply, for the trainer's ledger. */
  calls: z.array(CallSchema),
  /** The worker that ran it (its name), for the run's records. */
  worker: z.string(),
});
/** The outcome as the worker builds it (the schema checks what the trainer receives). */
export interface RolloutOutcome {
  trajectory?: Trajectory;
  error?: JobError;
  calls: CallRecord[];
  worker: string;
}

/**
 * One job per rollout of a run: the same rollout asked for again (a resumed trainer) finds the
 * job, finished or not, instead of adding another. BullMQ ids may not contain ':'.
 */
export function rolloutJobId(job: RolloutJobData): string {
  const identity = [job.run, job.skill, job.item, job.target, job.seed, job.sample, job.training ? 1 : 0];
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 32);
}
