/**
 * The dashboard's HTTP surface: the static page, uPlot from the package, a JSON API over the
 * run directories, and server-sent events when run files change. Only files inside the run roots
 * are ever read: a run through `Roots.resolve`, its files through safe-path.ts.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Hono } from 'hono';
import type { ActionAccess } from '../actions/access.ts';
import { ConfigRoots } from '../actions/config-roots.ts';
import type { PreflightOptions } from '../actions/preflight.ts';
import { actionRoutes } from '../actions/routes.ts';
import { Jobs } from '../actions/jobs.ts';
import { DiffPool } from '../files/diff-pool.ts';
import type { HostAllowList } from './hosts.ts';
import { LiveWatcher } from './live.ts';
import { SleepNights } from '../runs/nights.ts';
import { readRoutes } from './read-routes.ts';
import { Roots, type RunLocation } from '../files/roots.ts';
import { RunReader } from '../runs/run-reader.ts';
import { HttpError } from '../files/safe-path.ts';

export interface DashboardAppOptions {
  roots: string[];
  /** Poll interval of live updates, ms. */
  pollMs?: number;
  /** The host names a request may address (defence against DNS rebinding); undefined accepts any (an app used in-process, with no socket). */
  allowedHosts?: HostAllowList;
  /** How long one diff may take before it is refused, ms. */
  diffTimeoutMs?: number;
  /** The Sleep state folder whose nights are shown beside the runs (absent: none are). */
  sleepStateDir?: string;
  /** Launching, stopping, resuming and evaluating runs; absent: the dashboard only watches. */
  actions?: {
    access: ActionAccess;
    /** Directories the page may take configs from. */
    configRoots: string[];
    /** How the program is called in the commands shown (default `skillopt`). */
    program?: string;
    /** Working directory of the processes started (default: the server's). */
    cwd?: string;
    preflight?: PreflightOptions;
  };
}

const STATIC_DIR = path.join(import.meta.dirname, '..', 'static');
const UPLOT_DIR = path.dirname(createRequire(import.meta.url).resolve('uplot'));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** Every file the page is made of, by URL: a table made at start-up, never a path from a request. */
function assetTable(): Record<string, { file: string; type: string }> {
  const table: Record<string, { file: string; type: string }> = {
    '/': { file: path.join(STATIC_DIR, 'index.html'), type: TYPES['.html']! },
    '/vendor/uplot.js': { file: path.join(UPLOT_DIR, 'uPlot.iife.min.js'), type: TYPES['.js']! },
    '/vendor/uplot.css': { file: path.join(UPLOT_DIR, 'uPlot.min.css'), type: TYPES['.css']! },
  };
  for (const name of fs.readdirSync(STATIC_DIR)) {
    const type = TYPES[path.extname(name)];
    if (type && name !== 'index.html') table[`/${name}`] = { file: path.join(STATIC_DIR, name), type };
  }
  return table;
}

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

export function createDashboardApp(options: DashboardAppOptions) {
  const roots = new Roots(options.roots);
  const watcher = new LiveWatcher(roots, options.pollMs ?? 1000);
  const diffs = new DiffPool(options.diffTimeoutMs);
  const readers = new Map<string, RunReader>();
  const readerFor = (loc: RunLocation) => {
    let r = readers.get(loc.dir);
    if (!r) readers.set(loc.dir, (r = new RunReader(loc)));
    return r;
  };
  const nights = options.sleepStateDir ? new SleepNights(options.sleepStateDir) : undefined;
  const jobs = options.actions?.access.enabled
    ? new Jobs({ program: options.actions.program ?? 'skillopt', cwd: options.actions.cwd })
    : undefined;

  const app = new Hono();

  app.onError((err, c) => {
    if (err instanceof HttpError) return c.json({ error: err.message }, err.status);
    process.stderr.write(`dashboard: ${c.req.method} ${c.req.path}: ${err.stack ?? err.message}\n`);
    return c.json({ error: `internal error: ${err.message}` }, 500);
  });
  app.notFound((c) => c.json({ error: `no such page or API: ${c.req.path}` }, 404));

  app.use('*', async (c, next) => {
    if (options.allowedHosts) {
      const host = c.req.header('host') ?? '';
      if (!options.allowedHosts.allows(host)) {
        return c.json(
          {
            error: `requests for host ${JSON.stringify(host)} are refused (a defence against DNS rebinding); to reach the dashboard by this name, start it with --allowed-host NAME`,
          },
          403,
        );
      }
    }
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.header(k, v);
    await next();
  });

  for (const [url, asset] of Object.entries(assetTable())) {
    app.get(url, (c) => {
      c.header('Content-Type', asset.type);
      c.header('Cache-Control', 'no-cache');
      return c.body(fs.readFileSync(asset.file));
    });
  }

  app.route('/api', readRoutes({ roots, readers, readerFor, watcher, diffs, nights }));

  if (options.actions && jobs) {
    app.route(
      '/api',
      actionRoutes({
        access: options.actions.access,
        configs: new ConfigRoots(options.actions.configRoots),
        jobs,
        roots,
        readerFor,
        preflight: options.actions.preflight,
        nights,
      }),
    );
  } else {
    const access = options.actions?.access;
    app.get('/api/actions', (c) =>
      c.json(access ? access.describe(c) : { enabled: false, reason: 'this dashboard only watches runs' }),
    );
  }

  return { app, roots, watcher, diffs, jobs };
}
