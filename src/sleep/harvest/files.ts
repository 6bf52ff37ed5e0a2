/** Reading an agent's folders for transcripts: the walk (shared) and the readers harvest needs. */
import fs from 'node:fs';
import path from 'node:path';

export { isDirectory, statFile, walkFiles, type FoundFile, type WalkOptions } from '../../util/walk-files.ts';

/** The entries of a directory that are directories themselves (not links). */
export function subdirectories(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.join(dir, e.name));
  } catch {
    return [];
  }
}

/** A small JSON file's content, or undefined. */
export function readJsonFile(p: string): unknown {
  try {
    if (!fs.lstatSync(p).isFile()) return undefined;
    return JSON.parse(fs.readFileSync(p, 'utf8'));
  } catch {
    return undefined;
  }
}
