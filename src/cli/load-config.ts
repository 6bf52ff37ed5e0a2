/** Loading the config a command names, with its overrides and the original's flags. */
import { stringify } from 'yaml';
import { loadConfig, type LoadedConfig } from '../config/load.ts';
import { redact } from '../config/redact.ts';
import { originalFlagsOf, type ConfigOptions } from './common.ts';

export function loadFromOptions(opts: ConfigOptions, extra: string[] = []): LoadedConfig {
  const loaded = loadConfig(opts.config, {
    overrides: [
      ...(opts.cfgOptions ?? []).map((item) => ({ item, source: '--cfg-options' })),
      ...(opts.set ?? []).map((item) => ({ item, source: '--set' })),
      ...extra,
    ],
    flags: originalFlagsOf(opts),
  });
  for (const w of loaded.warnings) process.stderr.write(`warning: ${w}\n`);
  return loaded;
}

/** The resolved config as YAML, secrets redacted. */
export function renderConfig(loaded: LoadedConfig): string {
  return stringify(redact(loaded.config, loaded.secretPaths));
}
