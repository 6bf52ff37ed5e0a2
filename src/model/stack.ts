/**
 * The models of a run, one per role, each built from its backend and wrapped so that every
 * call goes through the same path, outermost first:
 *
 *   ledger (records every call; replays this run's recorded answers, so a resumed run never pays twice)
 *   → response cache (shared across runs; the simulator skips it: it is free and deterministic)
 *   → scheduler (the role's pool: concurrency, RPM/TPM, retries, timeout)
 *   → backend (a provider, or the simulator)
 */
import path from 'node:path';
import type { Config, RoleConfig } from '../config/schema.ts';
import { CachedModel, defaultCachePath, ResponseCache } from './cache.ts';
import { Ledger, LedgerModel } from './ledger.ts';
import { Pool } from './pool.ts';
import { getBackend } from './registry.ts';
import { ScheduledModel } from './scheduler.ts';
import { FatalModelError, type ChatModel, type Role } from './types.ts';
import './backends.ts';

export interface RoleModels {
  target: ChatModel;
  optimizer: ChatModel;
  judge: ChatModel;
  ledger: Ledger;
  /** The pools by name (target and optimizer apart unless a role names a shared `pool`). */
  pools: Map<string, Pool>;
  /** Closes the response cache. */
  close(): void;
}

export interface StackOptions {
  /** The run's calls.jsonl (undefined: no record on disk). */
  ledgerFile?: string;
  environment?: Record<string, string | undefined>;
  /** Override a role's model (tests, evaluation across targets); it still goes through the pool. */
  override?: Partial<Record<Role, ChatModel>>;
  /** Directory that a relative `cache.path` is resolved against (the config's). */
  configDir?: string;
}

export async function buildBackendModel(role: Role, rc: RoleConfig, config: Config, environment: Record<string, string | undefined>): Promise<ChatModel> {
  const spec = getBackend(rc.backend);
  if (!spec) throw new FatalModelError(`unknown backend '${rc.backend}' for model.${role}`);
  return spec.create(rc, { role, environment, reasoningEffort: config.model.reasoning_effort, seed: config.train.seed });
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
    ...((inner as { settings?: Record<string, unknown> }).settings ?? {}),
  };
}

export async function buildRoleModels(config: Config, options: StackOptions = {}): Promise<RoleModels> {
  const ledger = new Ledger(options.ledgerFile);
  const environment = options.environment ?? process.env;
  const pools = new Map<string, Pool>();
  let cache: ResponseCache | undefined;
  const openCache = () => {
    if (cache) return cache;
    const configured = config.cache.path;
    const file = configured ? path.resolve(options.configDir ?? process.cwd(), configured) : defaultCachePath(environment);
    cache = new ResponseCache(file);
    return cache;
  };

  const make = async (role: Role, rc: RoleConfig): Promise<ChatModel> => {
    const inner = options.override?.[role] ?? (await buildBackendModel(role, rc, config, environment));
    const poolName = rc.pool || role;
    let pool = pools.get(poolName);
    if (!pool) {
      pool = new Pool(poolName, { concurrency: rc.concurrency, rpm: rc.rpm, tpm: rc.tpm });
      pools.set(poolName, pool);
    }
    let model: ChatModel = new ScheduledModel(inner, pool, { maxRetries: rc.max_retries, timeoutMs: rc.timeout_s * 1000, backoffMs: rc.backoff_s * 1000, backoffMaxMs: rc.backoff_max_s * 1000 }, `model.${role}`);
    const cached = config.cache.mode !== 'off' && !inner.id.startsWith('sim:');
    if (cached) model = new CachedModel(model, openCache(), config.cache.mode, roleIdentity(rc, config, inner));
    return new LedgerModel(model, ledger, role);
  };

  return {
    target: await make('target', config.model.target),
    optimizer: await make('optimizer', config.model.optimizer),
    judge: await make('judge', config.model.judge as RoleConfig),
    ledger,
    pools,
    close: () => cache?.close(),
  };
}
