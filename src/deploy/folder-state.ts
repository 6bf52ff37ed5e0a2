/**
 * A skill folder as it is on disk, for deploy: each file's bytes and mode (a symbolic link as
 * its target, never followed), what changed against the record of a deployment, and the diff
 * shown before a package is written. What a package leaves out (`__pycache__`, `.git`, … as
 * reading a package skips them) is left out here too: a script run by the agent that writes
 * `__pycache__` has not edited the skill.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { unifiedDiff } from '../skill/document.ts';
import { isSkipped } from '../skill/package/folder.ts';
import { fileFromBytes } from '../skill/package/package.ts';

export type DiskFile = { kind: 'file'; mode: number; bytes: Buffer } | { kind: 'link'; target: string };

/** What a deployment recorded of each file it wrote: mode and SHA-256, by POSIX path. */
export type FolderManifest = Record<string, { mode: number; sha256: string }>;

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The files under `dir` by POSIX path, sorted; undefined when `dir` does not exist. */
export function folderFiles(dir: string): Map<string, DiskFile> | undefined {
  if (!fs.existsSync(dir)) return undefined;
  const out = new Map<string, DiskFile>();
  const visit = (abs: string, rel: string) => {
    const names = fs.readdirSync(abs).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const name of names) {
      const relPath = rel ? `${rel}/${name}` : name;
      if (isSkipped(relPath)) continue;
      const full = path.join(abs, name);
      const st = fs.lstatSync(full);
      if (st.isSymbolicLink()) out.set(relPath, { kind: 'link', target: fs.readlinkSync(full) });
      else if (st.isDirectory()) visit(full, relPath);
      else if (st.isFile()) out.set(relPath, { kind: 'file', mode: st.mode & 0o7777, bytes: fs.readFileSync(full) });
    }
  };
  visit(dir, '');
  return out;
}

/** What `folderFiles` leaves out of the folder at `dir` (the outermost of each), by POSIX path. */
export function leftOutPaths(dir: string): string[] {
  const out: string[] = [];
  const visit = (abs: string, rel: string) => {
    for (const e of fs.readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      if (isSkipped(relPath)) out.push(relPath);
      else if (e.isDirectory()) visit(path.join(abs, e.name), relPath);
    }
  };
  if (fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) visit(dir, '');
  return out;
}

/** The record of the files as they are now. */
export function manifestOf(files: ReadonlyMap<string, { mode: number; bytes: Uint8Array }>): FolderManifest {
  const out: FolderManifest = {};
  for (const [rel, f] of files) out[rel] = { mode: f.mode, sha256: sha256(f.bytes) };
  return out;
}

const octal = (mode: number) => mode.toString(8).padStart(3, '0');

/** What differs between the deployed record and the folder now, one line per file (none: unchanged). */
export function folderChanges(deployed: FolderManifest, now: ReadonlyMap<string, DiskFile> | undefined): string[] {
  if (!now) return ['the folder was removed'];
  const changes: string[] = [];
  const paths = [...new Set([...Object.keys(deployed), ...now.keys()])].sort();
  for (const p of paths) {
    const was = deployed[p];
    const is = now.get(p);
    if (!is) changes.push(`${p} was removed`);
    else if (!was) changes.push(`${p} was added`);
    else if (is.kind === 'link') changes.push(`${p} is now a symbolic link (to ${is.target})`);
    else {
      if (sha256(is.bytes) !== was.sha256) changes.push(`${p} was edited`);
      if (is.mode !== was.mode) changes.push(`${p} changed mode (${octal(was.mode)} → ${octal(is.mode)})`);
    }
  }
  return changes;
}

const isText = (bytes: Uint8Array) => fileFromBytes(bytes).kind === 'text';

/**
 * The diff from what the folder holds (undefined: nothing) to `after`, file by file: a unified
 * diff for text, sizes for binary files, a line for a mode that changes. Empty when they agree.
 */
export function folderDiff(
  dir: string,
  before: ReadonlyMap<string, DiskFile> | undefined,
  after: ReadonlyMap<string, { mode: number; bytes: Uint8Array }>,
): string {
  const parts: string[] = [];
  const label = (p: string) => path.join(dir, ...p.split('/'));
  const paths = [...new Set([...(before?.keys() ?? []), ...after.keys()])].sort();
  for (const p of paths) {
    const was = before?.get(p);
    const is = after.get(p);
    if (was?.kind === 'link') {
      parts.push(`symbolic link ${label(p)} (to ${was.target}) ${is ? 'replaced by a file' : 'removed'}\n`);
      if (!is) continue;
    }
    const old = was?.kind === 'file' ? was : undefined;
    if (old && is && Buffer.from(old.bytes).equals(Buffer.from(is.bytes))) {
      if (old.mode !== is.mode) parts.push(`mode of ${label(p)}: ${octal(old.mode)} → ${octal(is.mode)}\n`);
      continue;
    }
    const oldText = !old || isText(old.bytes);
    const newText = !is || isText(is.bytes);
    if (oldText && newText) {
      parts.push(
        unifiedDiff(
          old ? Buffer.from(old.bytes).toString('utf8') : '',
          is ? Buffer.from(is.bytes).toString('utf8') : '',
          {
            before: old ? label(p) : '(nothing)',
            after: is ? label(p) : '(nothing)',
          },
        ),
      );
    } else {
      const size = (f: { bytes: Uint8Array } | undefined) =>
        f ? `${f.bytes.byteLength.toLocaleString('en')} bytes` : 'nothing';
      parts.push(`binary file ${label(p)}: ${size(old)} → ${size(is)}\n`);
    }
    if (old && is && old.mode !== is.mode) parts.push(`mode of ${label(p)}: ${octal(old.mode)} → ${octal(is.mode)}\n`);
  }
  return parts.join('');
}
