/**
 * The models of a run or an evaluation, one per role (or several targets), each built from its
 * backend and wrapped so that every call goes through the same path, outermost first:
 *
 *   ledger (records every call; replays this run's recorded answers, so a resumed run never pays twice)
 *   → response cache (shared across runs; the simulator skips it: it is free and deterministic)
 *   → scheduler (the role's pool: concurrency, RPM/TPM, admission under the run's limits, retries,
 *     waits, timeout, fatal errors)
 *   → backend (a provider, or the simulator)
 *
 * Training and `skillopt eval` both build their models here, and only here.
 */
import path from 'node:path';
import { registerSecretsOf, registerUrlSecrets } from '../config/redact.ts';
import type { Config, RoleConfig } from '../config/schema.ts';
import { Admission } from './admission.ts';
import { BatchJournal } from './batch/batch-journal.ts';
import { BatchTransport } from './batch/batch-transport.ts';
import { BATCH_IN_FLIGHT, BatchedModel } from './batch/batched-model.ts';
import { CachedModel, defaultCachePath, ResponseCache } from './cache.ts';
import { Ledger, type Totals } from './ledger.ts';
import { LedgerModel } from './ledger-model.ts';
import { CallPool } from './call-pool.ts';
import { getBackend, type BackendContext } from './registry.ts';
import { EndpointReach } from './reach.ts';
import { RetryWatch, type ModelEvent } from './retry-watch.ts';
import { ScheduledModel, type PaceGate } from './call-scheduler.ts';
import { SlowCalls } from './slow-calls.ts';
import { FatalModelError, ModelConfigError, type ChatModel, type Role, type RunStop } from './types.ts';

/** A batch is answered within 24 h; a call of one waits that long and an hour more. */
const BATCH_TIMEOUT_MS = 25 * 3600_000;

export type { ModelEvent } from './retry-watch.ts';

export interface RoleModels {
  target: ChatModel;
  optimizer: ChatModel;
  judge: ChatModel;
  /** The target and judge for calls whose answers can wait: as batches with their `batch`, else `target` and `judge`. */
  batched: { target: ChatModel; judge: ChatModel; on: boolean };
  ledger: Ledger;
  /** The pools by name (target and optimizer apart unless a role names a shared `pool`). */
  pools: Map<string, CallPool>;
  /** Whether calls may be sent: the run's limits, and its stop once one is reached. */
  admission: Admission;
  /** The roles whose model has no known price, with the model. */
  unpriced: ReadonlyMap<Role, string>;
  /** Closes the response cache and the ledger's file. */
  close(): void;
}

export interface StackOptions {
  /** The run's calls.jsonl (undefined: no record on disk). */
  ledgerFile?: string;
  environment?: Record<string, string | undefined>;
  /**
   * Use these models instead of building a role's from its backend (tests, benchmarks). They go
   * through the pool, scheduler and ledger like any other; not through the response cache, which
   * keeps provider answers only.
   */
  override?: Partial<Record<Role, ChatModel>>;
  /** Directory that a relative `cache.path` is resolved against (the config's). */
  configDir?: string;
  /** Calls failing and being retried, long waits, options a model does not take: for the run's event log. */
  onEvent?: (event: ModelEvent) => void;
  /** The providers' HTTP client (default: the global `fetch`). */
  fetch?: typeof fetch;
  /**
   * The run's limits, checked before each call is sent: given what the run has spent (this
   * process and earlier ones) and the calls in flight, the stop a limit asks for, if any.
   */
  limit?: (totals: Totals, inFlight: number) => RunStop | undefined;
  /** The pace of a provider shared with other processes (rollout workers), by the endpoint a pool calls. */
  sharedPace?: (endpoint: string, limits: { rpm: number }) => PaceGate;
}

export async function buildBackendModel(
  role: Role,
  rc: RoleConfig,
  config: Config,
  environment: Record<string, string | undefined>,
  extra: Pick<BackendContext, 'notice' | 'fetch'> = {},
): Promise<ChatModel> {
  const spec = getBackend(rc.backend);
  if (!spec) throw new FatalModelError(`unknown backend '${rc.backend}' for model.${role}`);
  return spec.create(rc, {
    role,
    environment,
    reasoningEffort: config.model.reasoning_effort,
    seed: config.train.seed,
    ...extra,
  });
}

/** What shapes a role's answers beyond the request (the resolved endpoint comes from the backend): part of the response-cache key. */
function roleIdentity(rc: RoleConfig, config: Config, inner: ChatModel): Record<string, unknown> {
  return {
    backend: rc.backend,
    temperature: rc.temperature ?? null,
    reasoning_effort: rc.reasoning_effort || config.model.reasoning_effort,
    max_output_tokens: rc.max_output_tokens ?? null,
    json_schema: rc.json_schema,
    options: rc.options,
    capabilities: rc.capabilities,
    ...((inner as { settings?: Record<string, unknown> }).settings ?? {}),
  };
}

/** The one builder of models: every model it hands out shares its ledger, pools and response cache. */
export class ModelStack {
  readonly ledger: Ledger;
  /** The pools by name. */
  readonly pools = new Map<string, CallPool>();
  readonly admission: Admission;
  /** The roles whose model has no known price, with the model. */
  readonly unpriced = new Map<Role, string>();
  private cache: ResponseCache | undefined;
  private batchJournal: BatchJournal | undefined;
  private readonly environment: Record<string, string | undefined>;
  private readonly watch: RetryWatch;
  private readonly slowCalls: SlowCalls;
  private readonly reach: EndpointReach;

  constructor(
    private readonly config: Config,
    private readonly options: StackOptions = {},
  ) {
    this.ledger = new Ledger(options.ledgerFile);
    this.environment = options.environment ?? process.env;
    registerSecretsOf(this.environment);
    const emit = (e: ModelEvent) => options.onEvent?.(e);
    this.watch = new RetryWatch(emit);
    const run = config.run;
    this.slowCalls = new SlowCalls(emit, { afterMs: run.slow_call_s * 1000, everyMs: run.slow_call_every_s * 1000 });
    this.reach = new EndpointReach(run.unreachable_s * 1000);
    const limit = options.limit;
    this.admission = new Admission(limit ? (inFlight) => limit(this.ledger.totals(), inFlight) : undefined, {
      graceMs: run.stop_grace_s * 1000,
      onAbandon: (calls, graceMs) =>
        emit({
          type: 'log',
          level: 'warn',
          message: `${calls === 1 ? '1 model call' : `${calls} model calls`} still without a reply ${graceMs / 1000} s after the stop ${calls === 1 ? 'is' : 'are'} abandoned: the run makes ${calls === 1 ? 'it' : 'them'} again when it resumes (run.stop_grace_s)`,
        }),
    });
  }

  /**
   * `role`'s model (its config, or `rc`: another target of an evaluation), built from its backend
   * unless the options override it, and wrapped. Its pool is the role's `pool` when it names
   * one, else `pool`, else the role's own.
   */
  async model(role: Role, rc: RoleConfig = this.config.model[role] as RoleConfig, pool?: string): Promise<ChatModel> {
    registerUrlSecrets(rc.base_url);
    const override = rc === this.config.model[role] ? this.options.override?.[role] : undefined;
    if (override) return this.wrap(role, override, rc, { pool, cached: false });
    const notice = (message: string) => this.options.onEvent?.({ type: 'log', level: 'warn', message });
    return this.wrap(
      role,
      await buildBackendModel(role, rc, this.config, this.environment, { notice, fetch: this.options.fetch }),
      rc,
      { pool, cached: true },
    );
  }

  /** A given model wrapped like a built one (the caller's own models: not cached). */
  wrap(role: Role, inner: ChatModel, rc: RoleConfig, o: { pool?: string; cached?: boolean } = {}): ChatModel {
    return this.outer(role, this.schedule(role, inner, rc, rc.pool || o.pool || role), rc, inner, o.cached ?? false);
  }

  /**
   * `role`'s model for calls whose answers can wait (`model.<role>.batch`): through the provider's
   * batch API at its discount, the calls it could not answer made live. Without `batch` (or with
   * a test's own model), the role's model as `model()` builds it.
   */
  async batchModel(
    role: Role,
    rc: RoleConfig = this.config.model[role] as RoleConfig,
    pool?: string,
  ): Promise<ChatModel> {
    const overridden = rc === this.config.model[role] && this.options.override?.[role];
    if (!rc.batch || overridden) return this.model(role, rc, pool);
    registerUrlSecrets(rc.base_url);
    const say = (message: string) => this.options.onEvent?.({ type: 'log', level: 'info', message });
    const notice = (message: string) => this.options.onEvent?.({ type: 'log', level: 'warn', message });
    const transport = new BatchTransport({
      label: `model.${role}`,
      fetch: this.options.fetch ?? globalThis.fetch,
      journal: this.openBatchJournal(),
      pollMs: rc.batch_poll_s * 1000,
      say,
      stop: this.admission.abandoned,
    });
    const live = await buildBackendModel(role, rc, this.config, this.environment, {
      notice,
      fetch: this.options.fetch,
    });
    const batched = await buildBackendModel(role, rc, this.config, this.environment, {
      notice,
      fetch: transport.fetch,
    });
    if (!(batched as { batchable?: boolean }).batchable)
      throw new ModelConfigError(
        `model.${role}.batch: ${rc.backend} (${live.id}) has no batch API here; batches are OpenAI's Batch API (backend openai_chat, not Azure) and Anthropic's Message Batches (backend anthropic). Set model.${role}.batch: false`,
      );
    const poolName = rc.pool || pool || role;
    const model = new BatchedModel(
      this.schedule(role, batched, rc, `${poolName}:batch`, { batch: true }),
      this.schedule(role, live, rc, poolName),
    );
    return this.outer(role, model, rc, live, true);
  }

  /** The role's scheduler over `inner`, in the named pool (a batch path: no concurrency limit, no retry of its own). */
  private schedule(
    role: Role,
    inner: ChatModel,
    rc: RoleConfig,
    poolName: string,
    o: { batch?: boolean } = {},
  ): ChatModel {
    let pool = this.pools.get(poolName);
    if (!pool) {
      pool = o.batch
        ? new CallPool(poolName, { concurrency: BATCH_IN_FLIGHT, rpm: 0, tpm: 0 })
        : new CallPool(poolName, { concurrency: rc.concurrency, rpm: rc.rpm, tpm: rc.tpm });
      this.pools.set(poolName, pool);
    }
    const url = (inner as { url?: string }).url;
    if (!inner.priced) this.unpriced.set(role, inner.id);
    const policy = o.batch
      ? { maxRetries: 0, timeoutMs: BATCH_TIMEOUT_MS, backoffMs: 0, backoffMaxMs: 0, maxWaitMs: BATCH_TIMEOUT_MS }
      : {
          maxRetries: rc.max_retries,
          timeoutMs: rc.timeout_s * 1000,
          backoffMs: rc.backoff_s * 1000,
          backoffMaxMs: rc.backoff_max_s * 1000,
          maxWaitMs: rc.max_wait_s * 1000,
        };
    return new ScheduledModel(inner, pool, policy, `model.${role}`, {
      onFailure: (failure, final) => this.watch.failed(role, inner.id, url, failure, final),
      onWait: (ms, reason) => this.watch.waiting(role, inner.id, ms, reason),
      admission: this.admission,
      pace: o.batch
        ? undefined
        : this.options.sharedPace?.(JSON.stringify([poolName, inner.id, url ?? null]), { rpm: rc.rpm }),
      // A batch says how it is getting on by itself; its calls are slow by design.
      slowCalls: o.batch ? undefined : this.slowCalls,
      reach: this.reach,
    });
  }

  /** The response cache (for a backend's own models) and the ledger, around a scheduled model. */
  private outer(role: Role, model: ChatModel, rc: RoleConfig, inner: ChatModel, cached: boolean): ChatModel {
    if (cached && this.config.cache.mode !== 'off' && !inner.id.startsWith('sim:')) {
      const warn = (message: string) => this.options.onEvent?.({ type: 'log', level: 'warn', message });
      model = new CachedModel(
        model,
        this.openCache(),
        this.config.cache.mode,
        roleIdentity(rc, this.config, inner),
        warn,
      );
    }
    return new LedgerModel(model, this.ledger, role);
  }

  private openBatchJournal(): BatchJournal | undefined {
    if (!this.options.ledgerFile) return undefined;
    this.batchJournal ??= new BatchJournal(path.join(path.dirname(this.options.ledgerFile), 'batches.jsonl'));
    return this.batchJournal;
  }

  private openCache(): ResponseCache {
    if (this.cache) return this.cache;
    const configured = this.config.cache.path;
    const file = configured
      ? path.resolve(this.options.configDir ?? process.cwd(), configured)
      : defaultCachePath(this.environment);
    this.cache = new ResponseCache(file);
    return this.cache;
  }

  /** Closes the response cache and the ledger's file. */
  close(): void {
    this.cache?.close();
    this.cache = undefined;
    this.batchJournal?.close();
    this.batchJournal = undefined;
    this.ledger.close();
  }
}

/** The three roles of a training run. */
export async function buildRoleModels(config: Config, options: StackOptions = {}): Promise<RoleModels> {
  const m = config.model;
  if (m.optimizer.batch)
    throw new ModelConfigError(
      "model.optimizer.batch: every step waits for the optimizer's answers, so they cannot wait for a batch; batch applies to model.target and model.judge",
    );
  if (m.target.batch_baseline && !m.target.batch)
    throw new ModelConfigError(
      'model.target.batch_baseline sends the baseline as a batch: it needs model.target.batch: true',
    );
  const stack = new ModelStack(config, options);
  const target = await stack.model('target');
  const judge = await stack.model('judge');
  const on = m.target.batch || Boolean(m.judge.batch);
  return {
    target,
    optimizer: await stack.model('optimizer'),
    judge,
    batched: on
      ? {
          target: m.target.batch ? await stack.batchModel('target') : target,
          judge: m.judge.batch ? await stack.batchModel('judge') : judge,
          on,
        }
      : { target, judge, on },
    ledger: stack.ledger,
    pools: stack.pools,
    admission: stack.admission,
    unpriced: stack.unpriced,
    close: () => stack.close(),
  };
}
