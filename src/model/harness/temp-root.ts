/**
 * Where an agent's rollouts and configuration homes live on disk: one folder per skillopt
 * process under the system temp directory (`skillopt-agents-XXXXXX`), marked as ours by an
 * `owner.json` that names the process as a run lock does. It goes when the process exits; one
 * left by a process that was killed (kill -9, a crash, a power cut) is removed by the next
 * process that makes one, once its owner is proven gone (same host, same boot, same PID
 * namespace, no process of that pid and start time). A folder whose owner cannot be judged from
 * here (another host or container sharing the temp directory) is left alone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LockOwnerSchema, me, ownerState } from '../../run/lock.ts';

const PREFIX = 'skillopt-agents-';
const OWNER = 'owner.json';

let root: string | undefined;

/** Removes the folders of agent files whose owner is gone; returns them. */
export function sweepAgentFolders(tmp = os.tmpdir()): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(tmp).filter((n) => n.startsWith(PREFIX));
  } catch {
    return removed;
  }
  const self = me();
  for (const name of names) {
    const dir = path.join(tmp, name);
    if (dir === root) continue;
    let owner;
    try {
      owner = LockOwnerSchema.safeParse(JSON.parse(fs.readFileSync(path.join(dir, OWNER), 'utf8')));
    } catch {
      continue; // not marked (yet, or not by us): not ours to judge
    }
    if (!owner.success || ownerState(owner.data, self) !== 'dead') continue;
    fs.rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

/** This process's folder of agent files, made (and the folders of processes gone swept) on first use. */
export function agentTempRoot(): string {
  if (root && fs.existsSync(root)) return root;
  sweepAgentFolders();
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), PREFIX)));
  fs.writeFileSync(path.join(dir, OWNER), `${JSON.stringify(me())}\n`);
  if (root === undefined) process.once('exit', () => root && fs.rmSync(root, { recursive: true, force: true }));
  root = dir;
  return dir;
}
