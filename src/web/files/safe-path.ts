/**
 * The only way the dashboard turns a request into a file path, and the only way it opens,
 * lists or checks a file of a run. Every path is taken relative to a base directory (a run
 * directory, as a real path): a path from a request is refused when it is absolute, climbs
 * with `..` or names a hidden file (`.env`, `.git`); any file, however named, is refused when
 * its real path (symlinks resolved, directories included) lies outside the base, and opened
 * only when it is a regular file. Files are opened non-blocking, so that a named pipe or a
 * device in a run directory is refused instead of stalling the server.
 */
import fs from 'node:fs';
import path from 'node:path';

export class HttpError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 413 | 503,
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

/** `p` is `base` or lies below it (both real paths). */
export function within(base: string, p: string): boolean {
  return p === base || p.startsWith(base.endsWith(path.sep) ? base : base + path.sep);
}

/** How a file is named in messages: relative to its run directory. */
function shown(base: string, file: string): string {
  const rel = path.relative(base, file);
  return rel && !rel.startsWith('..') ? rel.split(path.sep).join('/') : file;
}

const missing = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

/**
 * `rel` resolved inside `base` (a real path). The file need not exist; when it does, its real
 * path must still lie inside `base`.
 */
export function resolveInside(base: string, rel: string, what = 'path', where = 'the run directory'): string {
  if (typeof rel !== 'string') throw new HttpError(400, `${what} is missing`);
  if (rel.includes('\0')) throw new HttpError(400, `${what} contains a NUL byte`);
  const normalised = rel.replace(/\\/g, '/');
  if (path.isAbsolute(rel) || path.posix.isAbsolute(normalised) || /^[a-zA-Z]:/.test(normalised)) {
    throw new HttpError(403, `${what} must be relative to ${where}: ${rel}`);
  }
  const parts = normalised.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) throw new HttpError(403, `${what} may not leave ${where}: ${rel}`);
  if (parts.some((p) => p.startsWith('.')))
    throw new HttpError(403, `${what} names a hidden file, which is never served: ${rel}`);
  const joined = path.join(base, ...parts);
  let real: string;
  try {
    real = fs.realpathSync(joined);
  } catch {
    // Missing: the lexical check above is all there is; whoever reads it gets nothing.
    return joined;
  }
  if (!within(base, real)) throw new HttpError(403, `${what} resolves outside ${where}: ${rel}`);
  return real;
}

/** The real path of `file`, refused when it lies outside `base`; undefined when it does not exist. */
function realInside(base: string, file: string): string | undefined {
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch (err) {
    if (missing(err)) return undefined;
    throw new HttpError(
      403,
      `${shown(base, file)} cannot be resolved (${(err as NodeJS.ErrnoException).code}); it is not read`,
    );
  }
  if (!within(base, real))
    throw new HttpError(403, `${shown(base, file)} resolves outside the run directory; it is not read`);
  return real;
}

function kindOf(st: fs.Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a named pipe';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

// O_NOFOLLOW: the real path has no link left in it, so a link there now was swapped in since.
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOFOLLOW ?? 0);

/** Where an open descriptor really points (Linux); undefined where the system does not say. */
export function openedPath(fd: number): string | undefined {
  try {
    // A file replaced since it was opened (a trainer's atomic rename) reads as "<path> (deleted)".
    return fs.readlinkSync(`/proc/self/fd/${fd}`).replace(/ \(deleted\)$/, '');
  } catch {
    return undefined;
  }
}

export interface OpenFile {
  fd: number;
  stat: fs.Stats;
}

/**
 * Opens a regular file inside `base` for reading; undefined when it does not exist. Refused
 * (HttpError 403) when it resolves outside `base` or is anything but a regular file. The caller
 * closes `fd`.
 */
export function openInside(base: string, file: string): OpenFile | undefined {
  const real = realInside(base, file);
  if (real === undefined) return undefined;
  let fd: number;
  try {
    fd = fs.openSync(real, OPEN_FLAGS);
  } catch (err) {
    if (missing(err)) return undefined;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP')
      throw new HttpError(403, `${shown(base, file)} was replaced by a link while being opened; it is not read`);
    throw new HttpError(403, `${shown(base, file)} cannot be opened (${code ?? (err as Error).message})`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile())
      throw new HttpError(403, `${shown(base, file)} is ${kindOf(stat)}, not a regular file; it is not read`);
    const opened = openedPath(fd);
    if (opened !== undefined && !within(base, opened))
      throw new HttpError(403, `${shown(base, file)} resolves outside the run directory; it is not read`);
    return { fd, stat };
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/** Reads from an open file: `length` bytes at `position` (fewer at its end). */
export function readAt(fd: number, length: number, position: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = fs.readSync(fd, buf, got, length - got, position + got);
    if (n <= 0) break;
    got += n;
  }
  return got === length ? buf : buf.subarray(0, got);
}

/** The first `maxBytes` of a regular file inside `base`, or undefined when it does not exist. */
export function readInside(
  base: string,
  file: string,
  maxBytes: number,
): { data: Buffer; size: number; truncated: boolean } | undefined {
  const open = openInside(base, file);
  if (!open) return undefined;
  try {
    const size = open.stat.size;
    return { data: readAt(open.fd, Math.min(size, maxBytes), 0), size, truncated: size > maxBytes };
  } finally {
    fs.closeSync(open.fd);
  }
}

/** Whether `file` is a regular file inside `base` (never throws). */
export function isFileInside(base: string, file: string): boolean {
  try {
    const real = realInside(base, file);
    return real !== undefined && fs.statSync(real).isFile();
  } catch {
    return false;
  }
}

/** The entries of a directory inside `base`; none when it is missing, outside `base`, or not a directory. */
export function listInside(base: string, dir: string): fs.Dirent[] {
  try {
    const real = realInside(base, dir);
    return real === undefined ? [] : fs.readdirSync(real, { withFileTypes: true });
  } catch {
    return [];
  }
}
