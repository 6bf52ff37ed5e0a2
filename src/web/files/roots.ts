/**
 * The run roots the dashboard shows, the run directories found under them, and the one way a
 * run id from a request becomes a directory. A run id is `<root index>/<path under the root>`
 * (just `<root index>` when the root is itself a run).
 */
import fs from 'node:fs';
import path from 'node:path';
import { HttpError, realDir, resolveInside } from './safe-path.ts';

/** Files that make a directory a run directory (ours or the original's). */
const RUN_MARKERS = ['history.json', 'runtime_state.json', 'events.jsonl', 'config.json', 'summary.json'];
/** How deep under a root runs are looked for (`outputs/<bench>/<run>` is depth 2). */
const MAX_DEPTH = 3;
const SKIP_DIRS = new Set(['node_modules', 'steps', 'skills']);

export interface Root {
  index: number;
  /** As given on the command line. */
  given: string;
  /** Real path (resolved again on each use: a root may be created after the server starts). */
  real: string;
}

export interface RunLocation {
  id: string;
  root: Root;
  /** Path under the root, '' when the root is the run. */
  rel: string;
  dir: string;
}

export function isRunDir(dir: string): boolean {
  return RUN_MARKERS.some((f) => fs.existsSync(path.join(dir, f)));
}

export class Roots {
  readonly roots: Root[];

  constructor(given: string[]) {
    if (given.length === 0) throw new Error('at least one run root is needed');
    this.roots = given.map((g, index) => ({ index, given: g, real: realDir(g) }));
  }

  /** Every run directory under every root, and the roots that could not be read. */
  discover(): { runs: RunLocation[]; problems: string[] } {
    const runs: RunLocation[] = [];
    const problems: string[] = [];
    for (const root of this.roots) {
      root.real = realDir(root.given);
      let st: fs.Stats;
      try {
        st = fs.statSync(root.real);
      } catch {
        problems.push(`run root ${root.given} does not exist (yet)`);
        continue;
      }
      if (!st.isDirectory()) {
        problems.push(`run root ${root.given} is not a directory`);
        continue;
      }
      this.walk(root, '', 0, runs);
    }
    return { runs, problems };
  }

  private walk(root: Root, rel: string, depth: number, out: RunLocation[]): void {
    const dir = rel ? path.join(root.real, rel) : root.real;
    if (isRunDir(dir)) {
      out.push(this.location(root, rel, dir));
      return;
    }
    if (depth >= MAX_DEPTH) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      // Symlinked directories are not followed: a run must live inside its root.
      if (!e.isDirectory() || e.name.startsWith('.') || SKIP_DIRS.has(e.name)) continue;
      this.walk(root, rel ? `${rel}/${e.name}` : e.name, depth + 1, out);
    }
  }

  private location(root: Root, rel: string, dir: string): RunLocation {
    return { id: rel ? `${root.index}/${rel}` : String(root.index), root, rel, dir };
  }

  /** The run directory of an id from a request; refused outside the roots, 404 when it is not a run. */
  resolve(id: string | undefined): RunLocation {
    if (!id) throw new HttpError(400, 'the run parameter is missing (a run id such as 0/my-run, from /api/runs)');
    const m = /^(\d+)(?:\/(.*))?$/.exec(id);
    if (!m)
      throw new HttpError(400, `not a run id: ${id} (expected <root index>/<path under the root>, from /api/runs)`);
    const root = this.roots[Number(m[1])];
    if (!root) throw new HttpError(404, `no run root number ${m[1]} (there are ${this.roots.length})`);
    root.real = realDir(root.given);
    const rel = (m[2] ?? '').replace(/\/+$/, '');
    const dir = rel ? resolveInside(root.real, rel, 'run id') : root.real;
    if (!fs.existsSync(dir))
      throw new HttpError(404, `run not found: ${id} (no directory ${rel || '.'} under ${root.given})`);
    if (!isRunDir(dir))
      throw new HttpError(
        404,
        `not a run directory: ${id} (${rel || '.'} under ${root.given} has no history.json, runtime_state.json, events.jsonl or config.json)`,
      );
    return this.location(root, rel, dir);
  }
}
