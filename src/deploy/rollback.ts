/**
 * Rolling a deployment back, newest first: a document's previous `SKILL.md` put back with its
 * bytes and mode (or the file removed when the deployment created it), a package's previous
 * folder swapped back in whole (or the folder removed). Refused when what was deployed was changed
 * since, unless forced. An interrupted deployment or rollback is finished or undone first.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { writeFileAtomic } from '../run/atomic.ts';
import { skillNameProblem } from '../skill/agent-skill.ts';
import type { DeployAgent, Scope } from './agents.ts';
import { entriesOf, JOURNAL, journalOf, readEntry, removeEmptyUpTo, tidyJournal, underSkillLock } from './journal.ts';
import { rollbackPackage } from './package-deploy.ts';
import { skillsFolder } from './places.ts';
import { type Recovered, recoverSwap } from './swap.ts';

export interface RollbackOptions {
  agent: DeployAgent;
  scope: Scope;
  /** The skill to roll back (default: the one deployed last in this folder). */
  name?: string;
  /** Roll back even when what was deployed was changed since. */
  force?: boolean;
  env?: Record<string, string | undefined>;
}

export interface RollbackResult {
  file: string;
  /** 'restored': what was there before is back; 'removed': the deployment had created it. */
  action: 'restored' | 'removed';
  /** Deployments of this skill still recorded (each can be rolled back in turn). */
  remaining: number;
  /** A package's rollback: the skill's folder, restored or removed whole. */
  dir?: string;
  /** An interrupted deployment or rollback of the skill, finished or undone first. */
  recovered?: Recovered;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The skills recorded in a folder's journal. */
export function journalNames(folder: string): string[] {
  const root = path.join(folder, JOURNAL);
  return (fs.existsSync(root) ? fs.readdirSync(root) : []).filter((n) => fs.statSync(path.join(root, n)).isDirectory());
}

/** Finishes or undoes a swap a killed process left for `name`, under its lock; then tidies. */
export function recoverSkill(folder: string, name: string): Recovered | undefined {
  const journal = journalOf(folder, name);
  let recovered: Recovered | undefined;
  try {
    recovered = underSkillLock(journal, () => recoverSwap(journal, path.join(folder, name)));
  } finally {
    tidyJournal(folder, name);
  }
  if (recovered?.createdDir) removeEmptyUpTo(folder, recovered.createdDir);
  return recovered;
}

export function rollbackSkill(o: RollbackOptions): RollbackResult {
  const folder = skillsFolder(o.agent, o.scope, o.env);
  const root = path.join(folder, JOURNAL);
  const recoveredFirst = new Map<string, Recovered>();
  let name = o.name;
  if (!name) {
    // The skill deployed last in this folder, once every interrupted swap is settled.
    for (const n of journalNames(folder)) {
      const r = recoverSkill(folder, n);
      if (r) recoveredFirst.set(n, r);
    }
    const latest = journalNames(folder)
      .map((n) => ({ n, last: entriesOf(path.join(root, n)).at(-1) }))
      .filter((x) => x.last)
      .map((x) => ({ n: x.n, time: readEntry(path.join(root, x.n, x.last!))?.time ?? '' }))
      .sort((a, b) => a.time.localeCompare(b.time))
      .at(-1);
    if (!latest) throw new UserError(`nothing to roll back: no deployment by skillopt is recorded in ${folder}`);
    name = latest.n;
  }
  const problem = skillNameProblem(name);
  if (problem) throw new UserError(`--name: ${problem}`);
  const journal = journalOf(folder, name);
  if (!fs.existsSync(journal))
    throw new UserError(`nothing to roll back: no deployment of '${name}' is recorded in ${folder}`);
  const dir = path.join(folder, name);
  const file = path.join(dir, 'SKILL.md');
  let removeDirs: { from: string; top: string } | undefined;
  let result: RollbackResult;
  try {
    result = underSkillLock(journal, () => {
      const recovered = recoverSwap(journal, dir) ?? recoveredFirst.get(name);
      const extra = recovered ? { recovered } : {};
      const last = entriesOf(journal).at(-1);
      if (!last) throw new UserError(`nothing to roll back: no deployment of '${name}' is recorded in ${folder}`);
      const entryDir = path.join(journal, last);
      const entry = readEntry(entryDir);
      if (!entry) throw new UserError(`${entryDir}: its deploy.json is missing; this deployment cannot be rolled back`);
      if (entry.kind === 'package') {
        const action = rollbackPackage(journal, entryDir, entry, o.force === true);
        if (entry.created_dir) removeDirs = { from: folder, top: entry.created_dir };
        return { file, action, remaining: entriesOf(journal).length, dir, ...extra };
      }
      const now = fs.existsSync(file) ? fs.readFileSync(file) : undefined;
      if (!o.force && (!now || sha256(now) !== entry.deployed_sha256)) {
        throw new UserError(
          `${file} ${now ? 'was changed' : 'was removed'} since skillopt deployed it (${entry.time}); rolling back would lose that. Use --force to roll back anyway`,
        );
      }
      let action: RollbackResult['action'];
      if (entry.previous) {
        writeFileAtomic(file, fs.readFileSync(path.join(entryDir, 'previous')));
        fs.chmodSync(file, entry.previous.mode);
        action = 'restored';
      } else {
        fs.rmSync(file, { force: true });
        action = 'removed';
        // The folders the deployment made go too, as long as nothing else is in them.
        removeDirs = { from: path.dirname(file), top: entry.created_dir ?? path.dirname(file) };
      }
      fs.rmSync(entryDir, { recursive: true, force: true });
      return { file, action, remaining: entriesOf(journal).length, ...extra };
    });
  } finally {
    tidyJournal(folder, name);
  }
  if (removeDirs) removeEmptyUpTo(removeDirs.from, removeDirs.top);
  return result;
}
