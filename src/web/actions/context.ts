/** What the action routes share: the access guard, the config roots, the jobs, the run roots and readers. */
import type { SleepNights } from '../nights.ts';
import type { Roots, RunLocation } from '../roots.ts';
import type { RunReader } from '../run-reader.ts';
import type { ActionAccess } from './access.ts';
import type { ConfigRoots } from './config-roots.ts';
import type { Jobs } from './jobs.ts';
import type { PreflightOptions } from './preflight.ts';

export interface ActionsContext {
  access: ActionAccess;
  configs: ConfigRoots;
  jobs: Jobs;
  roots: Roots;
  readerFor(loc: RunLocation): RunReader;
  preflight?: PreflightOptions;
  nights?: SleepNights;
}
