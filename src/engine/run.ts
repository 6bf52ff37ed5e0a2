import type { LoadedConfig } from '../config/load.ts';

export interface RunOptions {
  loaded: LoadedConfig;
  outRoot: string;
  configFile: string;
}

export async function runTraining(_opts: RunOptions): Promise<{ status: string }> {
  throw new Error('training is being built');
}
