/**
 * Finding files under a folder without following links out of it: directories are walked by
 * their entries (links are neither walked nor read), and a file's size and time come from one
 * `stat`.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface FoundFile {
  path: string;
  size: number;
  mtimeMs: number;
}

export interface WalkOptions {
  /** Files to keep, by name. */
  file: (name: string) => boolean;
  /** Directories not to enter, by name. */
  skipDir?: (name: string) => boolean;
  /** How deep to go below the root (default: no limit). */
  maxDepth?: number;
}

export function isDirectory(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

export function statFile(p: string): FoundFile | undefined {
  try {
    const st = fs.lstatSync(p);
    return st.isFile() ? { path: p, size: st.size, mtimeMs: st.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}

/** Files under `root` (none when it is missing); entries that vanish while walking are passed over. */
export function walkFiles(root: string, options: WalkOptions): FoundFile[] {
  const out: FoundFile[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if ((options.maxDepth === undefined || depth < options.maxDepth) && !options.skipDir?.(e.name))
          walk(p, depth + 1);
      } else if (e.isFile() && options.file(e.name)) {
        const found = statFile(p);
        if (found) out.push(found);
      }
    }
  };
  if (isDirectory(root)) walk(root, 0);
  return out;
}
