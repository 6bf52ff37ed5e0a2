/**
 * The run directory a launch writes. Asked for: a path strictly below a run root whose real
 * location (symlinked folders resolved) stays below that root, not deeper than the dashboard
 * looks, and not a run already. Not asked for: `<first root>/<env>/<timestamp>`, made unique.
 * The check picks it and tells the page, and the launch is sent the same: what the page shows
 * is what runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defaultOutRoot } from '../../run/runs-root.ts';
import { isRunDir, type Roots } from '../files/roots.ts';
import { HttpError, resolveInside, within } from '../files/safe-path.ts';

/** How deep under a run root a run is still found (roots.ts looks three levels down). */
const MAX_RUN_DEPTH = 3;

export const OutSchema = z.object({ root: z.number().int().nonnegative(), path: z.string().min(1) }).strict();
export type OutRequest = z.infer<typeof OutSchema>;

export interface OutDir {
  dir: string;
  /** The run's id in the dashboard (`<root>/<path>`). */
  id: string;
  /** The same, as the page sends it back to launch. */
  out: OutRequest;
}

/** A timestamped directory name, as the CLI makes for `--out` left out. */
export const stamp = (env: string) => path.basename(defaultOutRoot(env));

/** The real path `dir` would have: its deepest existing ancestor resolved, the rest appended. */
function realTarget(dir: string): string {
  const rest: string[] = [];
  let at = dir;
  for (;;) {
    try {
      return path.join(fs.realpathSync(at), ...rest);
    } catch {
      const up = path.dirname(at);
      if (up === at) return dir;
      rest.unshift(path.basename(at));
      at = up;
    }
  }
}

export function outDirFor(
  roots: Roots,
  out: OutRequest | undefined,
  env: string,
  taken: (dir: string) => boolean,
): OutDir {
  if (!out) {
    const root = roots.roots[0]!;
    const base = `${env || 'run'}/${stamp(env)}`;
    let rel = base;
    for (let n = 2; fs.existsSync(path.join(root.real, rel)) || taken(path.join(root.real, rel)); n++)
      rel = `${base}-${n}`;
    return { dir: path.join(root.real, rel), id: `${root.index}/${rel}`, out: { root: root.index, path: rel } };
  }
  const root = roots.roots[out.root];
  if (!root) throw new HttpError(400, `out.root: no run root number ${out.root} (there are ${roots.roots.length})`);
  const rel = out.path
    .replace(/\\/g, '/')
    .split('/')
    .filter((p) => p && p !== '.')
    .join('/');
  if (!rel)
    throw new HttpError(
      400,
      `out.path: ${JSON.stringify(out.path)} is the run root ${root.given} itself; name a directory below it`,
    );
  const dir = resolveInside(root.real, rel, 'out.path', `the run root ${root.given}`);
  const real = realTarget(dir);
  if (real === root.real || !within(root.real, real))
    throw new HttpError(
      403,
      `out.path: ${rel} leads to ${real} (through a symlinked folder), which is not below the run root ${root.given}`,
    );
  if (path.relative(root.real, real).split(path.sep).length > MAX_RUN_DEPTH)
    throw new HttpError(
      400,
      `out.path: ${rel} is more than ${MAX_RUN_DEPTH} levels under ${root.given}, where the dashboard would not find the run`,
    );
  if ((fs.existsSync(real) && isRunDir(real)) || taken(real))
    throw new HttpError(
      409,
      `out.path: ${rel} under ${root.given} already holds a run; resume it from its page, or choose another directory`,
    );
  return { dir: real, id: `${root.index}/${path.relative(root.real, real).split(path.sep).join('/')}`, out };
}
