/**
 * The dashboard's actions, a sub-app mounted at `/api`: the token for the page at `GET /actions`,
 * and under `/action/`, behind the access guard (access.ts), starting a run (launch-routes.ts),
 * acting on one (run-routes.ts) and on a Sleep night (night-actions.ts). Every process is an
 * ordinary `skillopt` command (jobs.ts).
 */
import { Hono } from 'hono';
import type { ActionsContext } from './context.ts';
import { launchRoutes } from './launch-routes.ts';
import { nightRoutes } from './night-actions.ts';
import { runRoutes } from './run-routes.ts';

export function actionRoutes(ctx: ActionsContext): Hono {
  const api = new Hono();
  api.get('/actions', (c) => c.json(ctx.access.describe(c)));
  api.use('/action/*', ctx.access.guard());
  api.route('/action', launchRoutes(ctx));
  api.route('/action', runRoutes(ctx));
  if (ctx.nights) api.route('/action/night', nightRoutes(ctx.nights));
  return api;
}
