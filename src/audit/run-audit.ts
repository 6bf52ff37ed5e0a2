/**
 * The audit as a run uses it: the lint of candidates (over every split's items, with the env's
 * scorer checks) and the seals of test figures, built once from `evaluation.audit`.
 */
import path from 'node:path';
import { backendEntry, canonicalBackend } from '../config/catalog.ts';
import type { Config } from '../config/schema.ts';
import type { AuditConfig, ProbeForm } from '../config/audit-schema.ts';
import type { Env, SecondScorer, Splits } from '../envs/types.ts';
import type { ChatModel } from '../model/types.ts';
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

/** The look at an accepted gain after the gate (`second_scorer`, `probes`); a part is absent when its check is off or the env cannot run it. */
export interface GainAudit {
  secondScorer?: { scorer: SecondScorer; judge?: ChatModel; minKept: number; maxItems: number };
  probes?: { probe: NonNullable<Env['probe']>; items: number; forms: readonly ProbeForm[]; margin: number };
  /** Whether a flag rejects the accept (`on_flag: reject`): then the gate cannot hand an accept on early. */
  rejects: boolean;
}

export interface RunAudit {
  lint: SkillLint;
  gain?: GainAudit;
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

function gainAudit(
  config: AuditConfig,
  env: Pick<Env, 'secondScorer' | 'probe'>,
  judge?: ChatModel,
): GainAudit | undefined {
  const scorer = config.checks.includes('second_scorer') ? env.secondScorer : undefined;
  const probe = config.checks.includes('probes') ? env.probe?.bind(env) : undefined;
  if (!scorer && !probe) return undefined;
  const { min_kept, max_items } = config.second_scorer;
  return {
    ...(scorer ? { secondScorer: { scorer, judge, minKept: min_kept, maxItems: max_items } } : {}),
    ...(probe ? { probes: { probe, ...config.probes } } : {}),
    rejects: config.on_flag === 'reject',
  };
}

/** Whether a run calls the judge model: to score rollouts, or as the audit's second scorer. */
export function usesJudgeModel(config: Config, env: Pick<Env, 'usesJudge' | 'secondScorer'>): boolean {
  const second = config.evaluation.audit.checks.includes('second_scorer') && env.secondScorer?.kind === 'judge';
  return env.usesJudge === true || second;
}

/** `judge`: the judge model, for an env whose second scorer is one. */
export function buildRunAudit(
  full: Config,
  env: Pick<Env, 'auditView' | 'scorerChecks' | 'secondScorer' | 'probe'>,
  splits: Pick<Splits, 'train' | 'val' | 'test'>,
  judge?: ChatModel,
): RunAudit | undefined {
  const config = full.evaluation.audit;
  if (config.checks.length === 0) return undefined;
  const lint = new SkillLint(auditItems(splits, env), env.scorerChecks?.() ?? [], {
    checks: config.checks,
    onFlag: config.on_flag,
    onFail: config.on_fail,
  });
  const gain = gainAudit(config, env, judge);
  const parts = { lint, ...(gain ? { gain } : {}) };
  if (!config.checks.includes('sealed_test')) return parts;
  const store = new SealStore(config.seal_dir || defaultSealDir());
  return { ...parts, seals: { store, rescore: config.rescore_test, ...sealIdentity(full) } };
}
