import type { LoadedConfig } from '../config/load.ts';

export async function runEvaluation(_opts: { loaded: LoadedConfig; outRoot: string; configFile: string; skillFile: string; split: string }): Promise<void> {
  throw new Error('evaluation is being built');
}
