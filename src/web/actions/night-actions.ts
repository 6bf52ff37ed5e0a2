/**
 * Adopting a Sleep night's proposals, and rolling an adoption back, from the dashboard: the same
 * functions `skillopt sleep adopt` and `rollback` call (under the adoption lock, journaled, all or
 * nothing), for the night named by its id. Mounted at `/api/action/night/`, behind the guard.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { UserError } from '../../errors.ts';
import { adopt, rollback } from '../../sleep/adoption/adopt.ts';
import type { SleepNights } from '../runs/nights.ts';
import { HttpError } from '../files/safe-path.ts';
import { body } from './request.ts';

const NightBody = z.object({ night: z.string() }).strict();

/** A refusal of the adoption (a file edited since the night, nothing left to adopt, a lock held) is a 409 with its reason. */
function refusedAs409<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof UserError) throw new HttpError(409, err.message);
    throw err;
  }
}

export function nightRoutes(nights: SleepNights): Hono {
  const routes = new Hono();
  routes.post('/adopt', async (c) => {
    const dir = nights.dirOf((await body(c, NightBody)).night);
    return c.json(refusedAs409(() => adopt(nights.stateDir, dir, undefined)));
  });

  routes.post('/rollback', async (c) => {
    const dir = nights.dirOf((await body(c, NightBody)).night);
    return c.json(refusedAs409(() => rollback(nights.stateDir, dir)));
  });
  return routes;
}
