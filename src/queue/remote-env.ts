/**
 * The trainer's side of rollouts on workers: an env whose `rollout` adds a job to the queue and
 * waits for its outcome, so that everything around it (the score cache, the results files, the
 * order, early stops) stays the engine's own. Each job's model calls come back with it and go
 * into the run's ledger, where they count against the budget like local calls; a job holds a
 * place in the admission while it is queued or running, so a budget reached or a stop stops
 * adding jobs, removes the ones no worker has taken, and the run ends once the taken ones are back.
 */
import os from 'node:os';
import { redactText } from '../config/redact.ts';
import { createHash } from 'node:crypto';
import { Job, Queue, QueueEvents } from 'bullmq';
import { UserError } from '../errors.ts';
import type { Env, Item, RolloutContext, Trajectory } from '../envs/types.ts';
import type { Admission } from '../model/admission.ts';
import type { CallRecord, Ledger } from '../model/ledger.ts';
import { FatalModelError, InfraError, RunStop } from '../model/types.ts';
import { skillHash } from '../skill/document.ts';
import { VERSION } from '../version.ts';
import type { Redis } from 'ioredis';
import { openRedis, redisConnection } from './connection.ts';
import {
  KEEP_SECONDS,
  KEY_PREFIX,
  QUEUE_NAME,
  RolloutOutcomeSchema,
  rolloutJobId,
  runSpecKey,
  skillKey,
  type JobError,
  type RolloutJobData,
  type RunSpec,
} from './jobs.ts';

export interface RemoteEnvOptions {
  /** The Redis URL (`run.queue`). */
  url: string;
  /** The run directory: with the host, it names the run's jobs (a resumed run finds its own). */
  runRoot: string;
  spec: Omit<RunSpec, 'version'>;
  ledger: Ledger;
  admission: Admission;
  /** Called when a worker has run a rollout (its name), for the run's event log. */
  onOutcome?: (worker: string) => void;
}

/** The run's name in Redis: the same run directory on the same host is the same run. */
export function queueRunId(runRoot: string): string {
  return createHash('sha256')
    .update(JSON.stringify([os.hostname(), runRoot]))
    .digest('hex')
    .slice(0, 24);
}

export class RemoteRollouts {
  private queue!: Queue<RolloutJobData>;
  private events!: QueueEvents;
  private readonly run: string;
  private readonly redis: Redis;
  private readonly stored = new Map<string, Promise<unknown>>();
  private ready: Promise<void> | undefined;
  private connected = false;
  /** Jobs this trainer waits on: removed from the queue when the run stops before a worker takes them. */
  private readonly waiting = new Map<string, { resolve: (value: unknown) => void; reject: (err: unknown) => void }>();

  constructor(private readonly o: RemoteEnvOptions) {
    this.run = queueRunId(o.runRoot);
    this.redis = openRedis(o.url, 'run.queue');
    o.admission.signal.addEventListener('abort', () => void this.withdraw(), { once: true });
  }

  /**
   * Checks that Redis answers and publishes the run's spec, then opens the queue; a Redis that
   * cannot be reached is a clear error before anything is sent (BullMQ itself would wait for it).
   */
  connect(): Promise<void> {
    this.ready ??= (async () => {
      const spec: RunSpec = { version: VERSION, ...this.o.spec };
      try {
        await this.redis.set(runSpecKey(this.run), JSON.stringify(spec), 'EX', KEEP_SECONDS);
      } catch (err) {
        throw new UserError(
          `run.queue: cannot use Redis at ${redactText(this.o.url)} (is redis-server running there, and reachable from here?): ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      const connection = redisConnection(this.o.url, 'run.queue');
      this.queue = new Queue<RolloutJobData>(QUEUE_NAME, { connection, prefix: KEY_PREFIX });
      this.events = new QueueEvents(QUEUE_NAME, { connection, prefix: KEY_PREFIX });
      this.connected = true;
      this.events.on('completed', ({ jobId, returnvalue }) => this.waiting.get(jobId)?.resolve(returnvalue));
      this.events.on('failed', ({ jobId, failedReason }) => this.waiting.get(jobId)?.reject(new Error(failedReason)));
      await this.events.waitUntilReady();
    })();
    return this.ready;
  }

  /** `env` with its rollouts sent to the workers (everything else as it was). */
  wrap(env: Env): Env {
    return {
      name: env.name,
      load: () => env.load(),
      rollout: (item, skill, ctx) => this.rollout(item, skill, ctx),
      analystGuide: env.analystGuide,
      taskTypes: env.taskTypes?.bind(env),
      usesJudge: env.usesJudge,
    };
  }

  private storeSkill(hash: string, skill: string): Promise<unknown> {
    let stored = this.stored.get(hash);
    if (!stored) {
      stored = this.redis.set(skillKey(hash), skill, 'EX', KEEP_SECONDS);
      this.stored.set(hash, stored);
    }
    return stored;
  }

  async rollout(item: Item, skill: string, ctx: RolloutContext): Promise<Trajectory> {
    await this.connect();
    const hash = skillHash(skill);
    await this.storeSkill(hash, skill);
    const data: RolloutJobData = {
      run: this.run,
      skill: hash,
      item: item.id,
      target: ctx.target.id,
      seed: ctx.seed,
      sample: ctx.sample ?? 0,
      training: ctx.training ?? false,
    };
    // A job is a call in flight for the admission: checked against the run's limits, and waited for on a stop.
    this.o.admission.enter();
    try {
      const jobId = rolloutJobId(data);
      let value: unknown;
      try {
        value = await this.finished(jobId, data);
      } catch (err) {
        if (err instanceof RunStop) throw err;
        // The job failed in BullMQ's hands (its worker lost twice, a worker's bug): not the item's fault.
        throw new InfraError(
          `rollout of ${item.id} on the workers failed: ${err instanceof Error ? err.message : String(err)}`,
          'other',
        );
      }
      const outcome = RolloutOutcomeSchema.safeParse(value);
      if (!outcome.success)
        throw new Error(
          `rollout job ${jobId} of ${item.id}: a worker's reply is not an outcome (${outcome.error.issues[0]?.message}); are the trainer and the worker the same version?`,
        );
      this.o.ledger.recordJob(jobId, outcome.data.calls as unknown as CallRecord[]);
      this.o.onOutcome?.(outcome.data.worker);
      if (outcome.data.error) {
        const error = jobError(outcome.data.error);
        throw error instanceof RunStop ? this.o.admission.halt(error) : error;
      }
      return outcome.data.trajectory as unknown as Trajectory;
    } finally {
      this.o.admission.leave();
    }
  }

  /**
   * The job's outcome once it is finished: added now, or found in the queue as an earlier process
   * of this run left it (finished: its outcome; failed: run again; waiting or running: waited for).
   */
  private async finished(jobId: string, data: RolloutJobData): Promise<unknown> {
    const done = new Promise<unknown>((resolve, reject) => this.waiting.set(jobId, { resolve, reject }));
    // A stop can reject it while the job is still being added (a round trip to Redis), before it is awaited below.
    done.catch(() => {});
    try {
      const job = await this.queue.add('rollout', data, {
        jobId,
        // A worker that dies mid-job (its lock expires) hands the job to another once; a second death fails it.
        attempts: 1,
        removeOnComplete: { age: KEEP_SECONDS },
        removeOnFail: { age: KEEP_SECONDS },
      });
      const state = await job.getState();
      if (state === 'completed') return (await Job.fromId(this.queue, jobId))?.returnvalue;
      if (state === 'failed') await job.retry('failed');
      return await done;
    } finally {
      this.waiting.delete(jobId);
    }
  }

  /** A stop: jobs no worker has taken are removed (their rollouts end with the stop); taken ones finish. */
  private async withdraw(): Promise<void> {
    const stop = this.o.admission.stopped;
    if (!stop) return;
    for (const [jobId, waiter] of [...this.waiting]) {
      // A job a worker has taken (locked) is not removed: it finishes and its calls are recorded.
      if (await this.queue.remove(jobId).catch(() => 0)) waiter.reject(stop);
    }
  }

  async close(): Promise<void> {
    if (this.connected) {
      await this.events.close();
      await this.queue.close();
    }
    this.redis.disconnect();
  }
}

/** The error a local rollout would have thrown. */
function jobError(e: JobError): Error {
  switch (e.type) {
    case 'fatal':
      return new FatalModelError(e.message);
    case 'stop':
      return new RunStop(e.message, e.kind as RunStop['reason']);
    default:
      return new Error(e.message);
  }
}
