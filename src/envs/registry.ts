/** Environments by name. */
import path from 'node:path';
import type { LoadedConfig } from '../config/load.ts';
import { resolveConfigPath } from '../util/paths.ts';
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

/**
 * The env a loaded config names, built by its factory (the config loader has checked its options),
 * with relative paths resolved as `EnvContext.resolvePath` says.
 */
export function createEnv(loaded: LoadedConfig, outRoot?: string): Env {
  const { config } = loaded;
  const factory = getEnvFactory(config.env.name);
  if (!factory) throw new UserError(`unknown env '${config.env.name}'; known envs: ${envNames().join(', ')}`);
  const ctx: EnvContext = {
    configDir: path.dirname(loaded.files.at(-1) ?? path.resolve('config.yaml')),
    resolvePath: (key, value) => resolveConfigPath(value, loaded.baseDirOf(`env.${key}`)),
    outRoot,
  };
  return factory.create(config.env, ctx);
}
