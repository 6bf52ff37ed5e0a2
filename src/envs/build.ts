/** The env a config names, built by its registered factory, with its splits loaded and checked. */
import path from 'node:path';
import type { LoadedConfig } from '../config/load.ts';
import { UserError } from '../errors.ts';
import { envNames, getEnvFactory } from './registry.ts';
import type { Env, EnvContext, Splits } from './types.ts';
import { configPathCandidates, resolveConfigPath } from '../util/paths.ts';

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
    missingPath: (key, value) => {
      const source = loaded.sourceOf?.(`env.${key}`);
      const looked = configPathCandidates(value, loaded.baseDirOf(`env.${key}`));
      const given = looked.length === 1 && looked[0] === value ? [] : [`'${value}'`];
      const said = [...given, ...(source ? [`set in ${source}`] : [])];
      return `env.${key} not found: ${looked.join(' or ')}${said.length ? ` (${said.join(', ')})` : ''}`;
    },
    outRoot,
  };
  return factory.create(config.env, ctx);
}

/**
 * The splits of an env built by `createEnv`, truncated to `env.limit`. Item ids must be unique
 * across the splits: scores are cached by item id.
 */
export async function loadSplits(env: Env, loaded: LoadedConfig): Promise<Splits> {
  const splits = await env.load();
  const limit = loaded.config.env.limit;
  if (limit > 0) for (const k of ['train', 'val', 'test'] as const) splits[k] = splits[k].slice(0, limit);
  const seen = new Map<string, string>();
  for (const k of ['train', 'val', 'test'] as const) {
    for (const item of splits[k]) {
      const other = seen.get(item.id);
      if (other)
        throw new UserError(
          `env '${env.name}': item id '${item.id}' is in both the ${other} and the ${k} split; ids must be unique across splits`,
        );
      seen.set(item.id, k);
    }
  }
  return splits;
}

/** The env of a config and its splits (`createEnv`, then `loadSplits`). */
export async function buildEnv(loaded: LoadedConfig, outRoot?: string): Promise<{ env: Env; splits: Splits }> {
  const env = createEnv(loaded, outRoot);
  return { env, splits: await loadSplits(env, loaded) };
}
