/** Environments by name: each factory, and its names entered in the config's catalog (which checks configs against them). */
import { addEnvEntry, envEntry, envNames } from '../config/catalog.ts';
import type { EnvFactory } from './types.ts';

const factories = new Map<string, EnvFactory>();

export function registerEnv(factory: EnvFactory): void {
  factories.set(factory.name, factory);
  addEnvEntry(factory);
}

export function getEnvFactory(name: string): EnvFactory | undefined {
  const entry = envEntry(name);
  return entry ? factories.get(entry.name) : undefined;
}

export { envNames };
