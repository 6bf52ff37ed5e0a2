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
import { CachedModel, defaultCachePath, ResponseCache } from './cache.ts';
import { Ledger, type Totals } from './ledger.ts';
import { LedgerModel } from './ledger-model.ts';
import { CallPool } from './call-pool.ts';
import { getBackend, type BackendContext } from './registry.ts';
import { EndpointReach } from './reach.ts';
import { RetryWatch, type ModelEvent } from './retry-watch.ts';
import { ScheduledModel, type PaceGate } from './call-scheduler.ts';
import { SlowCalls } from './slow-calls.ts';
import { FatalModelError, type ChatModel, type Role, type RunStop } from './types.ts';

export type { ModelEvent } from './retry-watch.ts';

export interface RoleModels {
  target: ChatModel;
  optimizer: ChatModel;
  judge: ChatModel;
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
    const poolName = rc.pool || o.pool || role;
    let pool = this.pools.get(poolName);
    if (!pool) {
      pool = new CallPool(poolName, { concurrency: rc.concurrency, rpm: rc.rpm, tpm: rc.tpm });
      this.pools.set(poolName, pool);
    }
    const url = (inner as { url?: string }).url;
    if (!inner.priced) this.unpriced.set(role, inner.id);
    const policy = {
      maxRetries: rc.max_retries,
      timeoutMs: rc.timeout_s * 1000,
      backoffMs: rc.backoff_s * 1000,
      backoffMaxMs: rc.backoff_max_s * 1000,
      maxWaitMs: rc.max_wait_s * 1000,
    };
    let model: ChatModel = new ScheduledModel(inner, pool, policy, `model.${role}`, {
      onFailure: (failure, final) => this.watch.failed(role, inner.id, url, failure, final),
      onWait: (ms, reason) => this.watch.waiting(role, inner.id, ms, reason),
      admission: this.admission,
      pace: this.options.sharedPace?.(JSON.stringify([poolName, inner.id, url ?? null]), { rpm: rc.rpm }),
      slowCalls: this.slowCalls,
      reach: this.reach,
    });
    if (o.cached && this.config.cache.mode !== 'off' && !inner.id.startsWith('sim:')) {
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
    this.ledger.close();
  }
}

/** The three roles of a training run. */
export async function buildRoleModels(config: Config, options: StackOptions = {}): Promise<RoleModels> {
  const stack = new ModelStack(config, options);
  return {
    target: await stack.model('target'),
    optimizer: await stack.model('optimizer'),
    judge: await stack.model('judge'),
    ledger: stack.ledger,
    pools: stack.pools,
    admission: stack.admission,
    unpriced: stack.unpriced,
    close: () => stack.close(),
  };
}
