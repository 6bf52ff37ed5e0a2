import '../../src/builtins.ts';
import path from 'node:path';
import { stringify } from 'yaml';
import { loadConfig, type LoadedConfig } from '../../src/config/load.ts';
import { tmpDir, writeFiles } from './tmp.ts';

/** A config file with these `model` (and other) sections, loaded as a user's would be. */
let shared: string | undefined;
let counter = 0;

export function configWith(
  sections: Record<string, unknown>,
  environment: Record<string, string> = {},
  overrides: string[] = [],
): LoadedConfig & { dir: string } {
  shared ??= tmpDir();
  const dir = path.join(shared, String(++counter));
  writeFiles(dir, { 'config.yaml': stringify(sections) });
  const loaded = loadConfig(path.join(dir, 'config.yaml'), { environment, cwd: dir, overrides });
  return { ...loaded, dir };
}
