/**
 * The only way the dashboard turns a request into a file path: a path relative to a base
 * directory (a run root or a run directory), refused when it is absolute, climbs with `..`,
 * names a hidden file (`.env`, `.git`), or resolves through a symlink to somewhere outside the
 * base.
 */
import fs from 'node:fs';
import path from 'node:path';

export class HttpError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 413,
    message: string,
  ) {
    super(message);
  }
}

/** The real path of a directory (symlinks resolved), or the resolved path when it does not exist. */
export function realDir(dir: string): string {
  const abs = path.resolve(dir);
  try {
    return fs.realpathSync(abs);
  } catch {
    return abs;
  }
}

function within(base: string, p: string): boolean {
  return p === base || p.startsWith(base.endsWith(path.sep) ? base : base + path.sep);
}

/**
 * `rel` resolved inside `base` (a real path). The file need not exist; when it does, its real
 * path must still lie inside `base`.
 */
export function resolveInside(base: string, rel: string, what = 'path'): string {
  if (typeof rel !== 'string') throw new HttpError(400, `${what} is missing`);
  if (rel.includes('\0')) throw new HttpError(400, `${what} contains a NUL byte`);
  const normalised = rel.replace(/\\/g, '/');
  if (path.isAbsolute(rel) || path.posix.isAbsolute(normalised) || /^[a-zA-Z]:/.test(normalised)) {
    throw new HttpError(403, `${what} must be relative to the run directory: ${rel}`);
  }
  const parts = normalised.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) throw new HttpError(403, `${what} may not leave the run directory: ${rel}`);
  if (parts.some((p) => p.startsWith('.'))) throw new HttpError(403, `${what} names a hidden file, which is never served: ${rel}`);
  const joined = path.join(base, ...parts);
  let real: string;
  try {
    real = fs.realpathSync(joined);
  } catch {
    // Missing: the lexical check above is all there is; whoever reads it gets ENOENT.
    return joined;
  }
  if (!within(base, real)) throw new HttpError(403, `${what} resolves outside the run directory: ${rel}`);
  return real;
}
