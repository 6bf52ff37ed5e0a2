/** Environments by name. */
import type { EnvFactory } from './types.ts';

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
