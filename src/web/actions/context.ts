/** What the action routes share: the access guard, the config roots, the jobs, the run roots and readers. */
import type { SleepNights } from '../runs/nights.ts';
import type { Roots, RunLocation } from '../files/roots.ts';
import type { RunReader } from '../runs/run-reader.ts';
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
