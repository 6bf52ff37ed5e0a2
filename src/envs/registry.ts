/** Environments by name. */
import type { EnvConfig } from '../config/schema.ts';
import { UserError } from '../errors.ts';
import type { Env, EnvContext, EnvFactory } from './types.ts';

const factories = new Map<string, EnvFactory>();

export function registerEnv(factory: EnvFactory): void {
  factories.set(factory.name, factory);
  for (const alias of factory.aliases ?? []) factories.set(alias, factory);
}

export function getEnvFactory(name: string): EnvFactory | undefined {
  return factories.get(name.trim().toLowerCase());
}

export function envNames(): string[] {
  return [...new Set([...factories.values()].map((f) => f.name))].sort();
}

/** The env a loaded config names, built by its factory (the config loader has checked its options). */
export function createEnv(config: { env: EnvConfig }, ctx: EnvContext): Env {
  const factory = getEnvFactory(config.env.name);
  if (!factory) throw new UserError(`unknown env '${config.env.name}'; known envs: ${envNames().join(', ')}`);
  return factory.create(config.env, ctx);
}
