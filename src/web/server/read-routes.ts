/**
 * The dashboard's read API under `/api/`: the runs, a run's detail, steps, skills and diffs,
 * trajectories and files, evaluations, lineage, Sleep nights, and the live-update stream. Every
 * run is found through `Roots.resolve`, its files read through safe-path.ts; nothing here writes.
 */
import fs from 'node:fs';
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { redactRecord } from '../../config/redact.ts';
import type { DiffPool } from '../files/diff-pool.ts';
import { listEvals } from '../runs/evals.ts';
import { readTextCapped } from '../files/file-cache.ts';
import { readLineage } from '../runs/lineage.ts';
import type { LiveMessage, LiveWatcher } from './live.ts';
import type { SleepNights } from '../runs/nights.ts';
import type { Roots, RunLocation } from '../files/roots.ts';
import type { RunReader } from '../runs/run-reader.ts';
import { HttpError, resolveInside } from '../files/safe-path.ts';
import { diffSkills, listSkillVersions, readSkill } from '../runs/skills.ts';
import { diffPackageFile } from '../runs/package-view.ts';
import { stepView } from '../runs/step-view.ts';
import { listRolloutDirs, trajectoryDetail, trajectoryPage } from '../runs/trajectories.ts';

export interface ReadContext {
  roots: Roots;
  /** The reader of a run, kept between requests (it caches what it has read). */
  readers: Map<string, RunReader>;
  readerFor(loc: RunLocation): RunReader;
  watcher: LiveWatcher;
  diffs: DiffPool;
  nights?: SleepNights;
}

/** Text files of a run the raw-file view may show. */
const TEXT_FILE = /\.(json|jsonl|md|txt|yaml|yml|log|csv)$/i;
const MAX_FILE_BYTES = 2 << 20;

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

export function readRoutes(ctx: ReadContext): Hono {
  const { roots, readers, readerFor, watcher, diffs, nights } = ctx;
  const runOf = (c: Context) => readerFor(roots.resolve(c.req.query('run')));
  const api = new Hono();

  api.get('/ping', (c) => c.json({ ok: true }));

  api.get('/runs', (c) => {
    const { runs, problems } = roots.discover();
    // Runs that are gone (deleted, moved) stop holding memory.
    const present = new Set(runs.map((r) => r.dir));
    for (const dir of readers.keys()) if (!present.has(dir) && !fs.existsSync(dir)) readers.delete(dir);
    const rows = runs.map((loc) => readerFor(loc).overview());
    rows.sort((a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? '') || b.updatedAt - a.updatedAt);
    // Records of earlier versions may hold a key in a URL (`?api-key=…`): none is served.
    return c.json(redactRecord({ roots: roots.roots.map((r) => r.given), problems, runs: rows }));
  });

  api.get('/run', (c) => c.json(redactRecord(runOf(c).detail())));

  api.get('/history', (c) => {
    const reader = runOf(c);
    const since = intParam(c, 'since') ?? 0;
    const { problems } = reader.history();
    return c.json({ since, rows: reader.rows(since), problems });
  });

  api.get('/step', (c) => {
    const reader = runOf(c);
    return c.json(stepView(reader, intParam(c, 'step', { required: true, min: 0 })!));
  });

  api.get('/skills', (c) => c.json({ versions: listSkillVersions(runOf(c).run) }));

  api.get('/skill', (c) => {
    const ref = c.req.query('ref');
    if (!ref) throw new HttpError(400, 'the ref parameter is missing (best, v:N, cand:N, slow:E or pool:ORIGIN)');
    return c.json(readSkill(runOf(c).run, ref));
  });

  api.get('/diff', async (c) => {
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

  api.get('/package-diff', async (c) => {
    const a = c.req.query('a');
    const b = c.req.query('b');
    const file = c.req.query('file');
    if (!a || !b || !file)
      throw new HttpError(400, 'the a, b and file parameters name two skill versions and a file of the package');
    return c.json(await diffPackageFile(runOf(c).run, diffs, a, b, file, c.req.raw.signal));
  });

  api.get('/rollouts', (c) => c.json({ dirs: listRolloutDirs(runOf(c).run, intParam(c, 'step')) }));

  api.get('/trajectories', (c) => {
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

  api.get('/trajectory', (c) => {
    const reader = runOf(c);
    const dir = c.req.query('dir');
    if (!dir) throw new HttpError(400, 'the dir parameter is missing (a rollout directory, from /api/rollouts)');
    return c.json(trajectoryDetail(reader.run.root, dir, intParam(c, 'n', { required: true })!));
  });

  api.get('/file', (c) => {
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

  api.get('/evals', (c) => c.json({ evals: listEvals(runOf(c).run) }));

  api.get('/lineage', (c) => c.json(readLineage(runOf(c).run)));

  api.get('/nights', (c) =>
    c.json(nights ? { enabled: true, ...nights.list() } : { enabled: false, stateDir: null, nights: [], problems: [] }),
  );

  api.get('/night', (c) => {
    if (!nights) throw new HttpError(404, 'this dashboard shows no Sleep nights (start it with --sleep-state DIR)');
    return c.json(nights.view(c.req.query('night')));
  });

  api.get('/live', (c) =>
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

  return api;
}
