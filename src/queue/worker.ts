/**
 * A rollout worker: takes rollout jobs from the queue, runs each with the env and the target of
 * the job's run (built once per run from this machine's copy of the config file the run's spec
 * names, with the run's plain settings: its code, data, endpoints and keys are this machine's
 * own; see run-spec.ts), and sends back the trajectory with every model call
 * it made, replies included, for the trainer's ledger. Calls go through this worker's pools,
 * retries and response cache; the pace a provider allows is shared with every other worker
 * through Redis.
 */
import os from 'node:os';
import { Worker, type Job } from 'bullmq';
import { redactText } from '../config/redact.ts';
import { UserError, errorMessage } from '../errors.ts';
import { buildEnv } from '../envs/build.ts';
import type { Env, Item } from '../envs/types.ts';
import { variantOf } from '../audit/probes.ts';
import { itemError } from '../engine/stages/rollout.ts';
import { Ledger, type CallRecord } from '../model/ledger.ts';
import { LedgerModel } from '../model/ledger-model.ts';
import { ModelStack, type ModelEvent } from '../model/stack.ts';
import { FatalModelError, RunStop, type ChatModel } from '../model/types.ts';
import { VERSION } from '../version.ts';
import type { Redis } from 'ioredis';
import { checkWorkerUrl, openRedis, redisConnection } from './connection.ts';
import {
  KEY_PREFIX,
  QUEUE_NAME,
  RolloutJobSchema,
  RunSpecSchema,
  runSpecKey,
  skillKey,
  type JobError,
  type RolloutJobData,
  type RolloutOutcome,
} from './jobs.ts';
import { runConfigOf } from './run-spec.ts';
import { SharedPace } from './shared-pace.ts';

export interface WorkerOptions {
  /** The Redis URL. */
  url: string;
  /** Rollouts at once in this worker. */
  concurrency: number;
  /** This worker's name in the run's records (default: host and process id). */
  name?: string;
  /**
   * How long a job's lock lasts without renewal: a worker that dies holds its jobs this long
   * before another takes them (BullMQ renews it at half this while the worker lives).
   */
  lockMs?: number;
  environment?: Record<string, string | undefined>;
  /** The project directory whose configs, code and data the runs use (default: the working directory). */
  project?: string;
  /** Take a Redis URL without a password on a non-loopback host. */
  insecure?: boolean;
  /** Lines for the worker's console. */
  log?: (line: string) => void;
}

interface RunServices {
  env: Env;
  items: Map<string, Item>;
  stack: ModelStack;
  target: ChatModel;
  judge?: ChatModel;
}

/** A run's calls, replies kept, as a job records them. */
class JobCalls extends Ledger {
  readonly calls: CallRecord[] = [];

  override record(rec: CallRecord): void {
    this.calls.push(rec);
    super.record(rec);
  }
}

export class RolloutWorker {
  private worker: Worker<RolloutJobData, RolloutOutcome> | undefined;
  private readonly runs = new Map<string, Promise<RunServices>>();
  private readonly name: string;
  private readonly log: (line: string) => void;
  private readonly redis: Redis;
  private readonly project: string;

  constructor(private readonly o: WorkerOptions) {
    checkWorkerUrl(o.url, o.insecure ?? false);
    this.name = o.name ?? `${os.hostname()}:${process.pid}`;
    this.log = o.log ?? (() => {});
    this.project = o.project ?? process.cwd();
    this.redis = openRedis(o.url, '--redis');
  }

  /** Checks that Redis answers, then takes jobs; resolves once it does. */
  async start(): Promise<void> {
    try {
      await this.redis.ping();
    } catch (err) {
      this.redis.disconnect();
      throw new UserError(
        `--redis: cannot use Redis at ${redactText(this.o.url)} (is redis-server running there, and reachable from here?): ${errorMessage(err)}`,
      );
    }
    const lockDuration = this.o.lockMs ?? 30_000;
    this.worker = new Worker<RolloutJobData, RolloutOutcome>(QUEUE_NAME, (job) => this.process(job), {
      connection: redisConnection(this.o.url, '--redis'),
      prefix: KEY_PREFIX,
      concurrency: this.o.concurrency,
      name: this.name,
      lockDuration,
      stalledInterval: Math.max(500, Math.round(lockDuration / 2)),
      // A job whose worker died is taken up once more; dying twice fails it (paid at most once more).
      maxStalledCount: 1,
    });
    this.worker.on('error', (err) => this.log(`worker: ${errorMessage(err)}`));
    await this.worker.waitUntilReady();
  }

  /** Stops taking jobs; resolves once the rollouts in flight are done and sent back. */
  async close(): Promise<void> {
    await this.worker?.close();
    this.redis.disconnect();
    for (const run of this.runs.values()) (await run.catch(() => undefined))?.stack.close();
  }

  private async process(job: Job<RolloutJobData, RolloutOutcome>): Promise<RolloutOutcome> {
    const data = RolloutJobSchema.parse(job.data);
    const calls = new JobCalls();
    const outcome = (extra: Pick<RolloutOutcome, 'trajectory' | 'error'>): RolloutOutcome => ({
      ...extra,
      calls: calls.calls,
      worker: this.name,
    });
    let services: RunServices;
    let skill: string;
    let item: Item;
    try {
      services = await this.services(data.run);
      const text = await this.redis.get(skillKey(data.skill));
      if (text === null)
        throw new Error(`the skill ${data.skill} is not in Redis (expired, or another Redis than the trainer's)`);
      skill = text;
      // A variant the audit made of an item (`src/audit/probes.ts`) is made again here from the item.
      const found = services.items.get(data.item) ?? variantOf(data.item, services.items, services.env);
      if (!found)
        throw new Error(
          `item '${data.item}' is not in this worker's data for env '${services.env.name}': the worker must have the same data as the trainer`,
        );
      item = found;
      if (services.target.id !== data.target)
        throw new Error(
          `the trainer's target is ${data.target}, this worker's ${services.target.id}: give both the same config and environment`,
        );
    } catch (err) {
      this.log(`job ${job.id}: ${errorMessage(err)}`);
      return outcome({
        error: { type: 'other', kind: 'worker', message: `worker ${this.name}: ${redactText(errorMessage(err))}` },
      });
    }
    const target = new LedgerModel(services.target, calls, 'target');
    const judge = services.judge && new LedgerModel(services.judge, calls, 'judge');
    try {
      const trajectory = await services.env.rollout(item, skill, {
        target,
        judge,
        seed: data.seed,
        sample: data.sample,
        training: data.training,
      });
      return outcome({ trajectory });
    } catch (err) {
      const failed = itemError(item, err);
      if (failed) return outcome({ trajectory: failed });
      if (err instanceof RunStop) {
        // This run's models refuse every call from now on: the next job builds them afresh.
        this.drop(data.run);
        return outcome({ error: { type: 'stop', kind: err.reason, message: redactText(err.message) } });
      }
      const error: JobError = {
        type: err instanceof FatalModelError ? 'fatal' : 'other',
        kind: err instanceof Error ? err.name : 'error',
        message: redactText(errorMessage(err)),
      };
      return outcome({ error });
    }
  }

  private drop(run: string): void {
    const services = this.runs.get(run);
    this.runs.delete(run);
    void services?.then(
      (s) => s.stack.close(),
      () => {},
    );
  }

  private services(run: string): Promise<RunServices> {
    let services = this.runs.get(run);
    if (!services) {
      services = this.build(run);
      this.runs.set(run, services);
      services.catch(() => this.runs.delete(run));
    }
    return services;
  }

  private async build(run: string): Promise<RunServices> {
    const stored = await this.redis.get(runSpecKey(run));
    if (stored === null)
      throw new Error(`run ${run} has no spec in Redis (expired, or another Redis than the trainer's)`);
    const raw = JSON.parse(stored) as { version?: unknown } | null;
    if (raw?.version !== VERSION)
      throw new Error(
        `the trainer runs skillopt ${String(raw?.version)}, this worker ${VERSION}: workers need the trainer's version`,
      );
    const spec = RunSpecSchema.parse(raw);
    const loaded = runConfigOf(spec, this.project, this.o.environment);
    const { config } = loaded;
    const { env, splits } = await buildEnv(loaded);
    const items = new Map<string, Item>();
    for (const split of [splits.train, splits.val, splits.test]) for (const item of split) items.set(item.id, item);
    const pace = new SharedPace(this.redis);
    const stack = new ModelStack(config, {
      environment: this.o.environment,
      configDir: loaded.baseDirOf('cache.path'),
      onEvent: (e: ModelEvent) => 'message' in e && this.log(`${e.type}: ${String(e.message)}`),
      sharedPace: (endpoint, limits) => pace.gate(endpoint, limits.rpm),
    });
    const target = await stack.model('target');
    const judge = env.usesJudge ? await stack.model('judge') : undefined;
    this.log(`run ${run}: env ${env.name} (${items.size} items), target ${target.id}`);
    return { env, items, stack, target, judge };
  }
}
