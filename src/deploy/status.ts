/**
 * What skillopt deployed in a skills folder: per skill, its recorded deployments, the last one,
 * and whether the skill's folder still holds what it wrote (what changed, when not). A deployment
 * or rollback a killed process left unfinished is finished or undone first.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DeployAgent, Scope } from './agents.ts';
import { folderChanges, folderFiles } from './folder-state.ts';
import { entriesOf, JOURNAL, journalOf, readEntry, removeEmptyUpTo } from './journal.ts';
import { skillsFolder } from './places.ts';
import { journalNames, recoverSkill } from './rollback.ts';
import type { Recovered } from './swap.ts';

export interface SkillStatus {
  name: string;
  dir: string;
  /** Deployments recorded (each can be rolled back in turn). */
  deployments: number;
  last?: { time: string; run: string; kind: 'document' | 'package' };
  /** What changed since the last deployment (empty: the folder holds what it wrote). */
  changes: string[];
  recovered?: Recovered;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

export function deployStatus(o: { agent: DeployAgent; scope: Scope; env?: Record<string, string | undefined> }): {
  folder: string;
  skills: SkillStatus[];
} {
  const folder = skillsFolder(o.agent, o.scope, o.env);
  const skills: SkillStatus[] = [];
  for (const name of journalNames(folder).sort()) {
    const recovered = recoverSkill(folder, name);
    const journal = journalOf(folder, name);
    const entries = entriesOf(journal);
    const dir = path.join(folder, name);
    const status: SkillStatus = { name, dir, deployments: entries.length, changes: [] };
    if (recovered) status.recovered = recovered;
    const entry = entries.length ? readEntry(path.join(journal, entries.at(-1)!)) : undefined;
    if (entry?.kind === 'package') {
      status.last = { time: entry.time, run: entry.run, kind: 'package' };
      status.changes = folderChanges(entry.deployed, folderFiles(dir));
    } else if (entry) {
      status.last = { time: entry.time, run: entry.run, kind: 'document' };
      const now = fs.existsSync(entry.file) ? fs.readFileSync(entry.file) : undefined;
      if (!now) status.changes = ['SKILL.md was removed'];
      else if (sha256(now) !== entry.deployed_sha256) status.changes = ['SKILL.md was edited'];
    }
    if (entries.length || recovered) skills.push(status);
  }
  // A process killed after it removed its last record, before the journal folder: nothing is left to keep.
  const root = path.join(folder, JOURNAL);
  removeEmptyUpTo(root, root);
  return { folder, skills };
}
