/**
 * A run lock: one process trains into a run directory at a time. The lock file names its
 * owner; a lock left by a process that no longer exists on this host is taken over.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../errors.ts';

interface LockInfo {
  pid: number;
  host: string;
  started: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface RunLock {
  release(): void;
}

export function acquireRunLock(dir: string): RunLock {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'run.lock');
  const info: LockInfo = { pid: process.pid, host: os.hostname(), started: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(info), { flag: 'wx' });
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off('exit', release);
        try {
          const owner = JSON.parse(fs.readFileSync(file, 'utf8')) as LockInfo;
          if (owner.pid === process.pid) fs.rmSync(file, { force: true });
        } catch {
          // already gone
        }
      };
      process.on('exit', release);
      return { release };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let owner: LockInfo | undefined;
      try {
        owner = JSON.parse(fs.readFileSync(file, 'utf8')) as LockInfo;
      } catch {
        owner = undefined;
      }
      const stale = owner === undefined || (owner.host === os.hostname() && owner.pid !== process.pid && !alive(owner.pid));
      if (stale && attempt === 0) {
        fs.rmSync(file, { force: true });
        continue;
      }
      throw new UserError(
        `run directory ${dir} is in use by process ${owner?.pid ?? '?'} on ${owner?.host ?? '?'} (since ${owner?.started ?? '?'}); ` +
          `wait for it to finish or choose another output directory`,
      );
    }
  }
  throw new UserError(`could not lock run directory ${dir}`);
}
