/** What the commands share: config options and loading. */
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { loadConfig, type LoadedConfig } from '../config/load.ts';
import { redact } from '../config/redact.ts';
import { collect } from './main.ts';

export interface ConfigOptions {
  config: string;
  cfgOptions?: string[];
  set?: string[];
}

export function addConfigOptions(cmd: Command): Command {
  return cmd
    .requiredOption('-c, --config <file>', 'YAML config file (may inherit others through _base_)')
    .option('--cfg-options <key=value...>', 'override config keys, e.g. train.batch_size=8 optimizer.use_gate=false')
    .option('--set <key=value>', 'override one config key (repeatable; same as --cfg-options)', collect);
}

export function loadFromOptions(opts: ConfigOptions, extra: string[] = []): LoadedConfig {
  const loaded = loadConfig(opts.config, { overrides: [...(opts.cfgOptions ?? []), ...(opts.set ?? []), ...extra] });
  for (const w of loaded.warnings) process.stderr.write(`warning: ${w}\n`);
  return loaded;
}

/** The resolved config as YAML, secrets redacted. */
export function renderConfig(loaded: LoadedConfig): string {
  return stringify(redact(loaded.config, loaded.secretPaths));
}
