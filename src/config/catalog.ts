/**
 * What the config loader checks names against: the backends and the envs this process knows,
 * with what loading a config needs of each (a backend's aliases, default model, options schema,
 * role defaults; an env's aliases, options schema, and the original's keys it does not
 * support). The model and env registries enter every backend and env here as they register
 * them, so the config layer imports neither.
 */
import type { ZodObject } from 'zod';
import type { RoleConfig } from './schema.ts';

/** A backend as the config knows it. */
export interface BackendEntry {
  name: string;
  aliases: string[];
  /** Model used when the role names none. */
  defaultModel: string;
  /** Schema of the role's `options` mapping. */
  optionsSchema?: ZodObject;
  /**
   * Role settings that differ for this backend when the config leaves them unset (an agent CLI
   * runs fewer calls at once, each for longer, than an API).
   */
  roleDefaults?: Partial<Pick<RoleConfig, 'concurrency' | 'timeout_s' | 'max_retries'>>;
  /** An agent harness that can only play the target (it runs tasks; it cannot answer the optimizer's prompts). */
  targetOnly?: boolean;
}

/** An env as the config knows it. */
export interface EnvEntry {
  name: string;
  aliases?: string[];
  /** The env's own config keys (beyond the core `env.*` keys), with defaults. */
  optionsSchema: ZodObject;
  /**
   * Keys of the original's configs that are accepted but not supported yet: key → what is not
   * supported. Config loading drops them with one warning each.
   */
  unsupportedOptions?: Record<string, string>;
}

const backends = new Map<string, BackendEntry>();
const backendAliases = new Map<string, string>();
const envs = new Map<string, EnvEntry>();

export function addBackendEntry(entry: BackendEntry): void {
  backends.set(entry.name, entry);
  backendAliases.set(entry.name, entry.name);
  for (const alias of entry.aliases) backendAliases.set(alias, entry.name);
}

/** The canonical name of a backend or alias, or undefined. */
export function canonicalBackend(name: string): string | undefined {
  return backendAliases.get(name.trim().toLowerCase());
}

export function backendEntry(name: string): BackendEntry | undefined {
  const canonical = canonicalBackend(name);
  return canonical ? backends.get(canonical) : undefined;
}

/** Every accepted spelling of a backend. */
export function backendNames(): string[] {
  return [...backendAliases.keys()].sort();
}

export function addEnvEntry(entry: EnvEntry): void {
  envs.set(entry.name, entry);
  for (const alias of entry.aliases ?? []) envs.set(alias, entry);
}

export function envEntry(name: string): EnvEntry | undefined {
  return envs.get(name.trim().toLowerCase());
}

/** Every env's name (aliases left out). */
export function envNames(): string[] {
  return [...new Set([...envs.values()].map((e) => e.name))].sort();
}
