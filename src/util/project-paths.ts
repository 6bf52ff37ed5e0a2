/**
 * Paths given by someone other than the user (an MCP client, a trainer through the queue) are
 * kept inside one project: a path is resolved against the project and refused when it, or the
 * real path it leads to through links, lies outside.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';

function within(base: string, p: string): boolean {
  const rel = path.relative(base, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The real path of the nearest existing ancestor of `p`, with the rest appended. */
function realish(p: string): string {
  const rest: string[] = [];
  let cur = p;
  for (;;) {
    try {
      return path.join(fs.realpathSync(cur), ...rest.reverse());
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return p;
      rest.push(path.basename(cur));
      cur = parent;
    }
  }
}

/** `given` (relative to the project, or absolute) as an absolute path inside `project`; else a UserError naming `what`. */
export function insideProject(project: string, given: string, what: string): string {
  if (given.includes('\0')) throw new UserError(`${what} contains a NUL byte`);
  const root = fs.realpathSync(project);
  const resolved = path.resolve(root, given);
  if (!within(root, resolved) || !within(root, realish(resolved)))
    throw new UserError(`${what} must lie inside the project ${root}: ${given}`);
  return resolved;
}
