/**
 * The audit as a run uses it: the lint of candidates (over every split's items, with the env's
 * scorer checks) and the seals of test figures, built once from `evaluation.audit`.
 */
import path from 'node:path';
import { backendEntry, canonicalBackend } from '../config/catalog.ts';
import type { Config } from '../config/schema.ts';
import type { Env, Splits } from '../envs/types.ts';
import { userCacheDir } from '../model/cache.ts';
import { SkillLint } from './audit.ts';
import { auditItems } from './items.ts';
import { SealStore } from './seal.ts';

export interface TestSeals {
  store: SealStore;
  /** Score again where a seal exists (`evaluation.audit.rescore_test`). */
  rescore: boolean;
  /** What answers and what scores, as the seal's key hashes them. */
  target: unknown;
  scorer: unknown;
}

export interface RunAudit {
  lint: SkillLint;
  /** Absent when `sealed_test` is not among the checks. */
  seals?: TestSeals;
}

/** The role settings that change a target's answers (not its pool, limits or key). */
export function targetIdentity(role: Record<string, unknown>, defaults: { backend: string; effort: string }): unknown {
  const backend = String(role.backend || defaults.backend);
  return {
    backend: canonicalBackend(backend) ?? backend,
    // A model left to the backend's default is that model.
    model: role.model || (backendEntry(backend)?.defaultModel ?? ''),
    base_url: role.base_url ?? '',
    temperature: role.temperature ?? null,
    reasoning_effort: role.reasoning_effort || defaults.effort,
    max_output_tokens: role.max_output_tokens ?? null,
    options: role.options ?? {},
  };
}

/** The env settings that change how answers are scored or asked for (not its paths or workers). */
export function scorerIdentity(env: Record<string, unknown>): unknown {
  const keep = ['name', 'scorer', 'extract', 'prompt', 'fields', 'options'];
  return Object.fromEntries(keep.filter((k) => env[k] !== undefined).map((k) => [k, env[k]]));
}

export function defaultSealDir(environment: Record<string, string | undefined> = process.env): string {
  return path.join(userCacheDir(environment), 'seals');
}

/** What a config's test figure measured: its target's answers and its env's scoring. */
export function sealIdentity(config: Config): { target: unknown; scorer: unknown } {
  const { model } = config;
  return {
    target: targetIdentity(model.target, { backend: model.backend, effort: model.reasoning_effort }),
    scorer: scorerIdentity(config.env),
  };
}

export function buildRunAudit(
  full: Config,
  env: Pick<Env, 'auditView' | 'scorerChecks'>,
  splits: Pick<Splits, 'train' | 'val' | 'test'>,
): RunAudit | undefined {
  const config = full.evaluation.audit;
  if (config.checks.length === 0) return undefined;
  const lint = new SkillLint(auditItems(splits, env), env.scorerChecks?.() ?? [], {
    checks: config.checks,
    onFlag: config.on_flag,
    onFail: config.on_fail,
  });
  if (!config.checks.includes('sealed_test')) return { lint };
  const store = new SealStore(config.seal_dir || defaultSealDir());
  return { lint, seals: { store, rescore: config.rescore_test, ...sealIdentity(full) } };
}
