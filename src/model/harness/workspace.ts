/**
 * The fresh folder an agent works in for one rollout, in this process's folder of agent files
 * under the system temp directory (temp-root.ts): the task, its attachments and documents, and the
 * skill where that agent reads skills. Nothing else goes in (never an answer or a split file), and
 * the folder is removed when the rollout ends, or with the process's folder if it is killed. One
 * to keep (`keep_workspace`) goes straight under the temp directory, where it outlives the run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FatalModelError, type WorkspaceFile } from '../types.ts';
import { agentTempRoot } from './temp-root.ts';

export interface Workspace {
  dir: string;
  remove(): void;
}

/** `rel` inside `dir`, or an error: workspace paths are relative and stay inside. */
function inside(dir: string, rel: string): string {
  const target = path.resolve(dir, rel);
  if (path.isAbsolute(rel) || !target.startsWith(dir + path.sep))
    throw new FatalModelError(`workspace file '${rel}' must be a relative path inside the workspace`);
  return target;
}

export function writeInto(dir: string, rel: string, content: string | Uint8Array, mode?: number): void {
  const target = inside(dir, rel);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, content);
  if (mode !== undefined) fs.chmodSync(target, mode);
}

/** Files handed back after a run, at most this long each: a script, not a data file. */
export const RETURNED_MAX_BYTES = 1_000_000;

/**
 * The text of each of `rels` the run left in the workspace as a regular file (not a link out of
 * it), up to `RETURNED_MAX_BYTES`; the others are left out.
 */
export function readReturned(dir: string, rels: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of rels) {
    const target = inside(dir, rel);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(target);
    } catch {
      continue;
    }
    if (!stat.isFile() || stat.size > RETURNED_MAX_BYTES) continue;
    out[rel] = fs.readFileSync(target, 'utf8');
  }
  return out;
}

function copyInto(dir: string, file: WorkspaceFile): void {
  const target = inside(dir, file.path);
  if (!fs.existsSync(file.source!))
    throw new FatalModelError(`workspace file '${file.path}': its source ${file.source} does not exist`);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.cpSync(file.source!, target, { recursive: true, dereference: true });
}

export function createWorkspace(
  prefix: string,
  files: { path: string; content: string | Uint8Array; mode?: number }[],
  copies: WorkspaceFile[] = [],
  options: { keep?: boolean } = {},
): Workspace {
  const parent = options.keep ? os.tmpdir() : agentTempRoot();
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(parent, `skillopt-${prefix}-`)));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    for (const f of files) writeInto(dir, f.path, f.content, f.mode);
    for (const f of copies) {
      if (f.source !== undefined) copyInto(dir, f);
      else writeInto(dir, f.path, f.content ?? '');
    }
  } catch (err) {
    remove();
    throw err;
  }
  return { dir, remove };
}
