/**
 * The dashboard's HTTP surface: the static page, uPlot from the package, a JSON API over the
 * run directories, and server-sent events when run files change. Only files inside the run roots
 * are ever read: a run through `Roots.resolve`, its files through safe-path.ts.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Hono, type Context } from 'hono';
import { redactRecord } from '../config/redact.ts';
import { streamSSE } from 'hono/streaming';
import type { ActionAccess } from './actions/access.ts';
import { ConfigRoots } from './actions/config-roots.ts';
import { Jobs } from './actions/jobs.ts';
import type { PreflightOptions } from './actions/preflight.ts';
import { mountNightActions } from './actions/night-actions.ts';
import { mountActions } from './actions/routes.ts';
import { readLineage } from './lineage.ts';
import { DiffPool } from './diff-pool.ts';
import { listEvals } from './evals.ts';
import { readTextCapped } from './file-cache.ts';
import type { HostAllowList } from './hosts.ts';
import { LiveWatcher, type LiveMessage } from './live.ts';
import { SleepNights } from './nights.ts';
import { Roots, type RunLocation } from './roots.ts';
import { RunReader } from './run-reader.ts';
import { HttpError, resolveInside } from './safe-path.ts';
import { diffSkills, listSkillVersions, readSkill } from './skills.ts';
import { stepView } from './step-view.ts';
import { listRolloutDirs, trajectoryDetail, trajectoryPage } from './trajectories.ts';

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

const STATIC_DIR = path.join(import.meta.dirname, 'static');
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

/** Text files of a run the raw-file view may show. */
const TEXT_FILE = /\.(json|jsonl|md|txt|yaml|yml|log|csv)$/i;
const MAX_FILE_BYTES = 2 << 20;

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

function intParam(c: Context, name: string, options: { required?: boolean; min?: number } = {}): number | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') {
    if (options.required) throw new HttpError(400, `the ${name} parameter is missing`);
    return undefined;
  }
  if (!/^\d{1,9}$/.test(raw)) throw new HttpError(400, `${name} must be a whole number, not ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (options.min !== undefined && n < options.min) throw new HttpError(400, `${name} must be at least ${options.min}`);
  return n;
}

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
  const runOf = (c: Context) => readerFor(roots.resolve(c.req.query('run')));
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

  app.get('/api/ping', (c) => c.json({ ok: true }));

  app.get('/api/runs', (c) => {
    const { runs, problems } = roots.discover();
    // Runs that are gone (deleted, moved) stop holding memory.
    const present = new Set(runs.map((r) => r.dir));
    for (const dir of readers.keys()) if (!present.has(dir) && !fs.existsSync(dir)) readers.delete(dir);
    const rows = runs.map((loc) => readerFor(loc).overview());
    rows.sort((a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? '') || b.updatedAt - a.updatedAt);
    // Records of earlier versions may hold a key in a URL (`?api-key=…`): none is served.
    return c.json(redactRecord({ roots: roots.roots.map((r) => r.given), problems, runs: rows }));
  });

  app.get('/api/run', (c) => c.json(redactRecord(runOf(c).detail())));

  app.get('/api/history', (c) => {
    const reader = runOf(c);
    const since = intParam(c, 'since') ?? 0;
    const { problems } = reader.history();
    return c.json({ since, rows: reader.rows(since), problems });
  });

  app.get('/api/step', (c) => {
    const reader = runOf(c);
    return c.json(stepView(reader, intParam(c, 'step', { required: true, min: 0 })!));
  });

  app.get('/api/skills', (c) => c.json({ versions: listSkillVersions(runOf(c).run) }));

  app.get('/api/skill', (c) => {
    const ref = c.req.query('ref');
    if (!ref) throw new HttpError(400, 'the ref parameter is missing (best, v:N, cand:N, slow:E or pool:ORIGIN)');
    return c.json(readSkill(runOf(c).run, ref));
  });

  app.get('/api/diff', async (c) => {
    const a = c.req.query('a');
    const b = c.req.query('b');
    if (!a || !b)
      throw new HttpError(
        400,
        'the a and b parameters name the two skills to compare (best, v:N, cand:N, slow:E or pool:ORIGIN)',
      );
    const context = intParam(c, 'context') ?? 3;
    return c.json(await diffSkills(runOf(c).run, diffs, a, b, Math.min(context, 100000), c.req.raw.signal));
  });

  app.get('/api/rollouts', (c) => c.json({ dirs: listRolloutDirs(runOf(c).run, intParam(c, 'step')) }));

  app.get('/api/trajectories', (c) => {
    const reader = runOf(c);
    const dir = c.req.query('dir');
    if (!dir) throw new HttpError(400, 'the dir parameter is missing (a rollout directory, from /api/rollouts)');
    return c.json(
      trajectoryPage(reader.run.root, dir, {
        outcome: c.req.query('outcome') || undefined,
        type: c.req.query('type') || undefined,
        q: c.req.query('q') || undefined,
        offset: intParam(c, 'offset'),
        limit: intParam(c, 'limit', { min: 1 }),
      }),
    );
  });

  app.get('/api/trajectory', (c) => {
    const reader = runOf(c);
    const dir = c.req.query('dir');
    if (!dir) throw new HttpError(400, 'the dir parameter is missing (a rollout directory, from /api/rollouts)');
    return c.json(trajectoryDetail(reader.run.root, dir, intParam(c, 'n', { required: true })!));
  });

  app.get('/api/file', (c) => {
    const reader = runOf(c);
    const rel = c.req.query('path');
    if (!rel) throw new HttpError(400, 'the path parameter is missing (a file of the run, relative to its directory)');
    const file = resolveInside(reader.run.root, rel, 'path');
    if (!TEXT_FILE.test(file))
      throw new HttpError(
        403,
        `only the run's text files (.json, .jsonl, .md, .txt, .yaml, .log, .csv) are shown, not ${rel}`,
      );
    const read = readTextCapped(reader.run.root, file, MAX_FILE_BYTES);
    if (!read) throw new HttpError(404, `no file ${rel} in this run`);
    return c.json(redactRecord({ path: rel, ...read }));
  });

  app.get('/api/evals', (c) => c.json({ evals: listEvals(runOf(c).run) }));

  app.get('/api/lineage', (c) => c.json(readLineage(runOf(c).run)));

  app.get('/api/nights', (c) =>
    c.json(nights ? { enabled: true, ...nights.list() } : { enabled: false, stateDir: null, nights: [], problems: [] }),
  );

  app.get('/api/night', (c) => {
    if (!nights) throw new HttpError(404, 'this dashboard shows no Sleep nights (start it with --sleep-state DIR)');
    return c.json(nights.view(c.req.query('night')));
  });

  if (options.actions && jobs) {
    mountActions(app, {
      access: options.actions.access,
      configs: new ConfigRoots(options.actions.configRoots),
      jobs,
      roots,
      readerFor,
      preflight: options.actions.preflight,
    });
    if (nights) mountNightActions(app, nights);
  } else {
    const access = options.actions?.access;
    app.get('/api/actions', (c) =>
      c.json(access ? access.describe(c) : { enabled: false, reason: 'this dashboard only watches runs' }),
    );
  }

  app.get('/api/live', (c) =>
    streamSSE(c, async (stream) => {
      const queue: LiveMessage[] = [];
      let wake: (() => void) | undefined;
      const unsubscribe = watcher.subscribe((msg) => {
        queue.push(msg);
        wake?.();
      });
      let open = true;
      stream.onAbort(() => {
        open = false;
        unsubscribe();
        wake?.();
      });
      await stream.writeSSE({ event: 'hello', data: JSON.stringify({ pollMs: watcher.intervalMs }) });
      while (open) {
        while (queue.length) {
          const msg = queue.shift()!;
          await stream.writeSSE({ event: msg.type, data: JSON.stringify(msg) });
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 15_000).unref();
        });
        wake = undefined;
        if (open && queue.length === 0) await stream.write(': keep-alive\n\n');
      }
    }),
  );

  return { app, roots, watcher, diffs, jobs };
}
