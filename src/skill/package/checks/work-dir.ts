/**
 * The temp folders the checks write a package copy into: under this process's folder of agent
 * files, so that one left by a killed process is swept by the next, and removed when done even
 * when what ran in it took away its own write permissions.
 */
import fs from 'node:fs';
import path from 'node:path';
import { agentTempRoot } from '../../../model/harness/temp-root.ts';

export function makeWorkDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(agentTempRoot(), `skillopt-${prefix}-`)));
}

export function removeWorkDir(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    const unlock = (p: string) => {
      try {
        fs.chmodSync(p, 0o700);
        for (const name of fs.readdirSync(p)) {
          const child = path.join(p, name);
          if (fs.lstatSync(child).isDirectory()) unlock(child);
        }
      } catch {
        // not ours to change: rmSync says what is left
      }
    };
    unlock(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
