/**
 * The dashboard's actions, a sub-app mounted at `/api`: the token for the page at `GET /actions`,
 * and under `/action/`, behind the access guard (access.ts), starting a run (launch-routes.ts),
 * acting on one (run-routes.ts) and on a Sleep night (night-actions.ts). Every process is an
 * ordinary `skillopt` command (jobs.ts).
 */
import { Hono } from 'hono';
import type { SleepNights } from '../nights.ts';
import type { Roots, RunLocation } from '../roots.ts';
import type { RunReader } from '../run-reader.ts';
import type { ActionAccess } from './access.ts';
import type { ConfigRoots } from './config-roots.ts';
import type { Jobs } from './jobs.ts';
import { launchRoutes } from './launch-routes.ts';
import { nightRoutes } from './night-actions.ts';
import type { PreflightOptions } from './preflight.ts';
import { runRoutes } from './run-routes.ts';

export interface ActionsContext {
  access: ActionAccess;
  configs: ConfigRoots;
  jobs: Jobs;
  roots: Roots;
  readerFor(loc: RunLocation): RunReader;
  preflight?: PreflightOptions;
  nights?: SleepNights;
}

export function actionRoutes(ctx: ActionsContext): Hono {
  const api = new Hono();
  api.get('/actions', (c) => c.json(ctx.access.describe(c)));
  api.use('/action/*', ctx.access.guard());
  api.route('/action', launchRoutes(ctx));
  api.route('/action', runRoutes(ctx));
  if (ctx.nights) api.route('/action/night', nightRoutes(ctx.nights));
  return api;
}
