/**
 * The sandbox a self-test runs in when bubblewrap (`bwrap`) is installed and works here: no
 * network, its own process, IPC and host-name namespaces, the system read-only, and out of
 * sight the user's home (but for the folders of PATH entries under it, read-only, so that
 * interpreters installed there run), the temp directories and `/run` (where daemons' sockets
 * are). Only the self-test's own folder is writable. The process tree goes with bwrap.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runProcess } from '../../../model/harness/process.ts';

/** `auto`: bubblewrap when it works here, else without; `bubblewrap`: only in it; `none`: never. */
export type SandboxChoice = 'auto' | 'bubblewrap' | 'none';

export type Bubblewrap = { ok: true } | { ok: false; why: string };

const BWRAP = 'bwrap';
const NAMESPACES = ['--die-with-parent', '--new-session', '--unshare-all'];

let probe: Promise<Bubblewrap> | undefined;

/** Whether `bwrap` is on PATH and can make a sandbox here (user namespaces may be off); asked once per process. */
export function bubblewrap(): Promise<Bubblewrap> {
  probe ??= runProcess({
    command: BWRAP,
    args: [...NAMESPACES, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', 'true'],
    cwd: os.tmpdir(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    timeoutMs: 10_000,
  }).then((res): Bubblewrap => {
    if (res.spawnError?.code === 'ENOENT') return { ok: false, why: 'bwrap is not installed' };
    if (res.spawnError) return { ok: false, why: `bwrap could not be started (${res.spawnError.message})` };
    if (res.exitCode === 0) return { ok: true };
    if (res.timedOut) {
      probe = undefined; // a busy machine, not an answer: asked again next time
      return { ok: false, why: 'bwrap did not answer within 10 s' };
    }
    const said = res.stderr.trim().split('\n').at(-1);
    return { ok: false, why: `bwrap cannot make a sandbox here${said ? ` (${said})` : ''}` };
  });
  return probe;
}

const isInside = (parent: string, p: string) => p.startsWith(parent + path.sep);

/** The folders to hide: the temp directories, `/run` and the user's home. */
function hidden(home: string | undefined): string[] {
  const dirs = new Set(['/tmp', os.tmpdir(), '/run']);
  if (home && path.isAbsolute(home) && path.resolve(home) !== '/') dirs.add(path.resolve(home));
  return [...dirs].filter((d) => d !== '/' && fs.existsSync(d)).sort((a, b) => a.length - b.length);
}

/** The first folder under `home` of each PATH entry inside it: `~/.pyenv` for `~/.pyenv/shims`. */
function toolFoldersIn(home: string | undefined, pathList: string): string[] {
  if (!home || !path.isAbsolute(home) || path.resolve(home) === '/') return [];
  const root = path.resolve(home);
  const found = new Set<string>();
  for (const entry of pathList.split(path.delimiter)) {
    if (!path.isAbsolute(entry)) continue;
    const p = path.resolve(entry);
    if (isInside(root, p)) found.add(path.join(root, path.relative(root, p).split(path.sep)[0]!));
  }
  return [...found].sort();
}

/** `bwrap` and its arguments to run `argv` in `cwd`, with only `work` (which holds `cwd`) writable. */
export function sandboxed(work: string, cwd: string, argv: string[]): { command: string; args: string[] } {
  const home = process.env.HOME ?? os.homedir();
  const args = [...NAMESPACES, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const dir of hidden(home)) args.push('--tmpfs', dir);
  for (const dir of toolFoldersIn(home, process.env.PATH ?? '')) args.push('--ro-bind-try', dir, dir);
  args.push('--bind', work, work, '--chdir', cwd, '--', ...argv);
  return { command: BWRAP, args };
}
