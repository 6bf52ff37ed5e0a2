/**
 * Reading a file a user named (a config, a data file, a skill) without letting it hang or
 * swamp the process: only a regular file is read (a FIFO with no writer would block forever, a
 * device such as /dev/zero never ends), and only up to a size limit. The file is opened without
 * blocking and checked on the open descriptor, so that nothing swapped in after a check is read.
 * The asynchronous form reads off the event loop, where a slow disk cannot stall signals.
 */
import fs from 'node:fs';

/** Why a file was not read, in words the caller puts after the file's name. */
export class FileRefused extends Error {
  override name = 'FileRefused';
  constructor(
    readonly file: string,
    readonly reason: 'missing' | 'not_a_file' | 'too_large' | 'unreadable',
    message: string,
  ) {
    super(message);
  }
}

const MB = 1024 * 1024;

/** `3.0 MB`, `2 MB`: sizes in the messages. */
export function sizeInWords(bytes: number): string {
  const mb = bytes / MB;
  return Number.isInteger(mb) ? `${mb} MB` : `${mb.toFixed(1)} MB`;
}

function kindOf(stats: fs.Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** Checks an open file: a regular file within the limit (`what` names it in the message, e.g. "a config file"). */
function check(file: string, stats: fs.Stats, maxBytes: number, what: string): void {
  if (!stats.isFile()) throw new FileRefused(file, 'not_a_file', `${file} is ${kindOf(stats)}, not a file`);
  if (stats.size > maxBytes)
    throw new FileRefused(
      file,
      'too_large',
      `${file} is ${sizeInWords(stats.size)}, over the ${sizeInWords(maxBytes)} ${what} may have`,
    );
}

function refusedOpen(file: string, err: unknown): FileRefused {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new FileRefused(file, 'missing', `${file} does not exist`);
  if (code === 'EISDIR') return new FileRefused(file, 'not_a_file', `${file} is a directory, not a file`);
  return new FileRefused(file, 'unreadable', `cannot read ${file}: ${(err as Error).message}`);
}

// O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

/** The bytes of a regular file of at most `maxBytes`, or a `FileRefused` saying why not. */
export function readRegularFileSync(file: string, maxBytes: number, what: string): Buffer {
  let fd: number;
  try {
    fd = fs.openSync(file, OPEN_FLAGS);
  } catch (err) {
    throw refusedOpen(file, err);
  }
  try {
    check(file, fs.fstatSync(fd), maxBytes, what);
    return fs.readFileSync(fd);
  } catch (err) {
    throw err instanceof FileRefused ? err : refusedOpen(file, err);
  } finally {
    fs.closeSync(fd);
  }
}

/** The same, read off the event loop. */
export async function readRegularFile(file: string, maxBytes: number, what: string): Promise<Buffer> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, OPEN_FLAGS);
  } catch (err) {
    throw refusedOpen(file, err);
  }
  try {
    check(file, await handle.stat(), maxBytes, what);
    return await handle.readFile();
  } catch (err) {
    throw err instanceof FileRefused ? err : refusedOpen(file, err);
  } finally {
    await handle.close();
  }
}

/** Checks, without opening it, that a path is a regular file within the limit (for readers that open it themselves). */
export function checkRegularFile(file: string, maxBytes: number, what: string): void {
  let stats: fs.Stats;
  try {
    stats = fs.statSync(file);
  } catch (err) {
    throw refusedOpen(file, err);
  }
  check(file, stats, maxBytes, what);
}
