/**
 * Which sessions belong to the project being harvested: those whose working folder is the
 * project's folder or inside it. The project of the working directory is its git root (or the
 * directory itself outside a repository), so a session run in a subfolder of the repository
 * counts, and one run in the home folder does not count for every project below it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { cursorSlug } from './cursor.ts';

export type Scope = { kind: 'all' } | { kind: 'projects'; roots: string[] };

/** The git root above `dir` (the folder holding `.git`), or `dir` itself. */
export function projectRoot(dir: string): string {
  let cur = path.resolve(dir);
  for (;;) {
    if (fs.existsSync(path.join(cur, '.git'))) return cur;
    const up = path.dirname(cur);
    if (up === cur) return path.resolve(dir);
    cur = up;
  }
}

/** A root and, when it differs, its real path (a session records whichever its process saw). */
function forms(root: string): string[] {
  const abs = path.resolve(root);
  try {
    const real = fs.realpathSync.native(abs);
    return real === abs ? [abs] : [abs, real];
  } catch {
    return [abs];
  }
}

/** `projects`: 'all', 'invoked' (the project of `cwd`) or a list of folders (each with what is inside it). */
export function scopeOf(projects: 'all' | 'invoked' | string[], cwd = process.cwd()): Scope {
  if (projects === 'all') return { kind: 'all' };
  const roots = projects === 'invoked' ? [projectRoot(cwd)] : projects.map((p) => path.resolve(cwd, p));
  return { kind: 'projects', roots: [...new Set(roots.flatMap(forms))] };
}

function inside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Whether a session's folder (or, for a Cursor transcript without one, its workspace slug) is in scope. */
export function inScope(scope: Scope, project: string, workspaceSlug?: string): boolean {
  if (scope.kind === 'all') return true;
  if (project) return path.isAbsolute(project) && scope.roots.some((r) => inside(path.resolve(project), r));
  if (!workspaceSlug) return false;
  return scope.roots.some((r) => {
    const slug = cursorSlug(r);
    return workspaceSlug === slug || workspaceSlug.startsWith(`${slug}-`);
  });
}

/** The scope in words, for the console. */
export function describeScope(scope: Scope): string {
  return scope.kind === 'all' ? 'every project' : scope.roots.join(', ');
}
