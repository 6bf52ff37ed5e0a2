import type { EnvConfig } from '../config/schema.ts';

/** An env's own options from its config section, parsed (the config loader has validated them strictly). */
export function envOptions<T>(schema: { shape: Record<string, unknown>; parse(v: unknown): T }, config: EnvConfig): T {
  return schema.parse(Object.fromEntries(Object.entries(config).filter(([k]) => k in schema.shape)));
}
