/**
 * Who may act through the dashboard (launch, stop, resume, evaluate). Actions exist when the
 * server listens on loopback only, or when it was started with `--allow-actions`. Every action
 * request carries the server's token (a random value made at start-up) in a header, is refused
 * when it comes from another origin, and a POST must be JSON: a page on another site can neither
 * read the token (no CORS) nor send such a request without a preflight that this server never
 * answers. On loopback the page asks the server for the token; with `--allow-actions` on another
 * address the token is printed in the terminal, and the user brings it to the page.
 */
import crypto from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { isLoopback } from '../server/hosts.ts';

export const TOKEN_HEADER = 'x-skillopt-token';

export interface AccessOptions {
  /** The address the server listens on. */
  bind: string;
  /** `--allow-actions`: actions on an address other than loopback, for holders of the token. */
  allowActions?: boolean;
  /** The token (default: random). */
  token?: string;
  /** Where refusals are reported (default: standard error). */
  log?: (line: string) => void;
}

/** What `GET /api/actions` tells the page. */
export interface AccessInfo {
  enabled: boolean;
  token?: string;
  /** Actions are allowed, but only with the token printed by `skillopt ui`. */
  needsToken?: boolean;
  reason?: string;
}

function sameToken(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

export class ActionAccess {
  readonly token: string;
  /** Whether actions exist at all. */
  readonly enabled: boolean;
  /** The page gets the token from its user, not from the server. */
  readonly tokenFromUser: boolean;
  readonly disabledReason?: string;
  private readonly log: (line: string) => void;

  constructor(options: AccessOptions) {
    this.token = options.token ?? crypto.randomBytes(24).toString('base64url');
    const loopback = isLoopback(options.bind);
    this.enabled = loopback || options.allowActions === true;
    this.tokenFromUser = !loopback;
    if (!this.enabled) {
      this.disabledReason = `the dashboard listens on ${options.bind}, not on loopback: launching, stopping, resuming and evaluating runs are off. Start it with --allow-actions to allow them to whoever has the token it prints`;
    }
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  /** The answer to `GET /api/actions`. */
  describe(c: Context): AccessInfo {
    if (!this.enabled) return { enabled: false, reason: this.disabledReason };
    if (this.tokenFromUser && !sameToken(c.req.header(TOKEN_HEADER), this.token)) {
      return {
        enabled: false,
        needsToken: true,
        reason:
          'actions need the token that skillopt ui printed when it started: open the address it printed (with ?token=…)',
      };
    }
    return { enabled: true, token: this.token };
  }

  /** Why a request to an action endpoint is refused, or undefined when it may proceed. */
  refusal(c: Context): { status: 403 | 415; why: string } | undefined {
    if (!this.enabled) return { status: 403, why: this.disabledReason! };
    const origin = c.req.header('origin');
    const host = c.req.header('host');
    if (origin !== undefined && (!host || (origin !== `http://${host}` && origin !== `https://${host}`))) {
      return {
        status: 403,
        why: `a request from another origin (${origin}) is refused: actions are taken from the dashboard's own page only`,
      };
    }
    const site = c.req.header('sec-fetch-site');
    if (site !== undefined && site !== 'same-origin' && site !== 'none') {
      return { status: 403, why: `a ${site} request is refused: actions are taken from the dashboard's own page only` };
    }
    if (!sameToken(c.req.header(TOKEN_HEADER), this.token)) {
      return {
        status: 403,
        why: `the action token is missing or wrong (the ${TOKEN_HEADER} header); reload the dashboard page`,
      };
    }
    if (c.req.method === 'POST' && !/^application\/json\b/i.test(c.req.header('content-type') ?? '')) {
      return { status: 415, why: 'an action is a POST of JSON (Content-Type: application/json)' };
    }
    return undefined;
  }

  /** Middleware for the action endpoints. */
  guard(): MiddlewareHandler {
    return async (c, next) => {
      const refused = this.refusal(c);
      if (refused) {
        this.log(`dashboard: refused ${c.req.method} ${c.req.path}: ${refused.why}`);
        return c.json({ error: refused.why }, refused.status);
      }
      await next();
    };
  }
}
