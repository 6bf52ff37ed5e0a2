/**
 * Deploying a trained skill where an agent reads it, as `<skills folder>/<name>/`: a run's
 * `best_skill/` package as the whole folder (every file with its bytes and mode, swapped in as
 * one unit: `package-deploy.ts`), else its `best_skill.md` as the folder's `SKILL.md`. The
 * `name` and `description` front matter an agent needs are the skill's own when it has some
 * (both checked against the Agent Skills rules), else made from the run when none is given. The
 * diff against what is there comes first, and the tools its front matter lets the agent use
 * without asking are said, the broad ones warned of. Each deployment keeps what it replaced in a
 * journal beside the skills (`journal.ts`), so that `rollback` puts back exactly what was there
 * (a file's or a folder's bytes and modes), or removes what the deployment created.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { DEFAULT_SKILL_DESCRIPTION, skillMarkdown } from '../model/harness/skill-install.ts';
import { readJson, writeFileAtomic, writeJsonAtomic } from '../run/atomic.ts';
import { skillDescriptionProblem, skillNameProblem } from '../skill/agent-skill.ts';
import { unifiedDiff } from '../skill/document.ts';
import { readPackageDir } from '../skill/package/folder.ts';
import { type SkillPackage, SKILL_FILE } from '../skill/package/package.ts';
import { frontMatter } from '../skill/regions.ts';
import { firstMissing } from '../util/paths.ts';
import type { DeployAgent, Scope } from './agents.ts';
import { describeFromRun } from './description.ts';
import { allowedTools, broadTools, frontMatterField } from './front-matter.ts';
import {
  type DocumentEntry,
  journalOf,
  nextEntryDir,
  removeEmptyUpTo,
  tidyJournal,
  underSkillLock,
} from './journal.ts';
import {
  changedSinceError,
  changesSinceDeployed,
  packageContents,
  planPackage,
  writePackage,
} from './package-deploy.ts';
import { skillsFolder } from './places.ts';
import { pendingSwap, type Recovered, recoverSwap } from './swap.ts';

export { rollbackSkill, type RollbackOptions, type RollbackResult } from './rollback.ts';

export interface DeployOptions {
  /** The run directory holding `best_skill.md` (and `best_skill/` when the skill is a package). */
  run: string;
  agent: DeployAgent;
  scope: Scope;
  /** The skill's folder name and front-matter name (default: the skill's own, else from the run). */
  name?: string;
  description?: string;
  /** Show the diff, write nothing. */
  dryRun?: boolean;
  /** Deploy even over a package changed since skillopt deployed it. */
  force?: boolean;
  env?: Record<string, string | undefined>;
}

export interface DeployResult {
  /** The skill's `SKILL.md`. */
  file: string;
  /** The skill's folder. */
  dir: string;
  /** 'package': the run's `best_skill/`, written as the whole folder; 'document': `best_skill.md` as `SKILL.md`. */
  kind: 'document' | 'package';
  /** The skill's name (its folder). */
  name: string;
  /** The unified diff from what was there (nothing: empty) to what is deployed. */
  diff: string;
  /** What is deployed differs from what was there. */
  changed: boolean;
  written: boolean;
  /** Where what it replaced is kept (absent: there was none, or nothing was written). */
  backup?: string;
  /** The tools the skill's front matter lets the agent use without asking (`allowed-tools`). */
  allowedTools: string[];
  /** Said to the user: defaults taken, what to check. */
  notes: string[];
  /** What the user should look at before an agent uses the skill (broad `allowed-tools`). */
  warnings: string[];
  /** An interrupted deployment or rollback of the skill, finished or undone first. */
  recovered?: Recovered;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The run's env and the skill name and description its agent target used, when it had one. */
function runDefaults(run: string): { env: string; name?: string; description?: string } {
  const stored = readJson<{
    config?: {
      env?: { name?: string };
      model?: { target?: { options?: { skill_name?: string; skill_description?: string } } };
    };
  }>(path.join(run, 'config.json'));
  const options = stored?.config?.model?.target?.options;
  return {
    env: stored?.config?.env?.name || 'skill',
    name: options?.skill_name,
    description: options?.skill_description,
  };
}

function checkName(name: string, from: string): string {
  const problem = skillNameProblem(name);
  if (problem) throw new UserError(`${from}: ${problem}`);
  return name;
}

function checkDescription(description: string, from: string): string {
  const problem = skillDescriptionProblem(description);
  if (problem) throw new UserError(`${from}: ${problem}`);
  return description;
}

/** The env's name as a skill name: `skillopt-<env>`, in the characters a name may hold. */
function nameFromEnv(env: string): string {
  const slug = env
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `skillopt-${slug || 'skill'}`.slice(0, 64).replace(/-+$/, '');
}

/** The run's skill: its `best_skill/` package when there is one, else its `best_skill.md`. */
function runSkill(run: string, shown: string): { kind: DeployResult['kind']; pkg: SkillPackage; source: string } {
  const dir = path.join(run, 'best_skill');
  if (fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    return { kind: 'package', pkg: readPackageDir(dir), source: path.join(dir, SKILL_FILE) };
  const best = path.join(run, 'best_skill.md');
  if (!fs.existsSync(best))
    throw new UserError(
      `${shown}: no best_skill.md here (a run of skillopt train writes it once its first step is done)`,
    );
  return { kind: 'document', pkg: { skill: fs.readFileSync(best, 'utf8') }, source: best };
}

export function deploySkill(o: DeployOptions): DeployResult {
  const run = path.resolve(o.run);
  const { kind, pkg, source: best } = runSkill(run, o.run);
  const skill = pkg.skill;
  if (!skill.trim()) throw new UserError(`${best} is empty: there is nothing to deploy`);
  const notes: string[] = [];
  const warnings: string[] = [];
  const defaults = runDefaults(run);
  const block = frontMatter(skill);
  let name: string;
  let description: string;
  if (o.description !== undefined) checkDescription(o.description, '--description');
  if (block) {
    const own = frontMatterField(block, 'name');
    if (!own)
      throw new UserError(
        `${best}: its front matter has no name; add one, or remove the front matter and deploy with --name`,
      );
    name = checkName(own, `${best} (its front matter)`);
    if (o.name && o.name !== name)
      throw new UserError(
        `--name ${o.name}: the skill's front matter names it '${name}' (an agent needs the folder and the name to agree); change the front matter or leave out --name`,
      );
    if (o.description !== undefined)
      throw new UserError(
        `--description: ${best} has a front matter of its own, which is deployed as it is; change its description there, or remove the front matter`,
      );
    description = checkDescription(frontMatterField(block, 'description') ?? '', `${best} (its front matter)`);
  } else {
    name = checkName(o.name ?? defaults.name ?? nameFromEnv(defaults.env), o.name ? '--name' : `${run}/config.json`);
    if (o.description !== undefined) description = o.description;
    else if (defaults.description && defaults.description !== DEFAULT_SKILL_DESCRIPTION)
      description = checkDescription(
        defaults.description,
        `${run}/config.json (model.target.options.skill_description)`,
      );
    else {
      description = describeFromRun(skill, run);
      notes.push(
        `the description was made from the run: "${description}". Agents choose skills by it: give your own with --description`,
      );
    }
  }
  const tools = allowedTools(block);
  if (tools.length > 0) {
    const broad = broadTools(tools);
    if (broad.length > 0)
      warnings.push(
        `the skill's front matter lets the agent use, without asking, ${broad.map((b) => `${b.tool} (${b.why})`).join(', ')}: narrow or remove its allowed-tools in ${best} unless you mean it`,
      );
  }
  // A package's own SKILL.md is deployed byte for byte; a document is given its front matter.
  const skillFile = kind === 'package' && block ? skill : skillMarkdown(skill, name, description);
  const folder = skillsFolder(o.agent, o.scope, o.env);
  const dir = path.join(folder, name);
  const journal = journalOf(folder, name);
  const result = { file: path.join(dir, SKILL_FILE), dir, kind, name, allowedTools: tools, notes, warnings };
  const contents = kind === 'package' ? packageContents(pkg, skillFile) : undefined;

  if (o.dryRun) {
    if (pendingSwap(journal))
      throw new UserError(
        `${dir}: a deployment or rollback of it was interrupted; run skillopt deploy --status (or deploy without --dry-run) to finish it first`,
      );
    const since = changesSinceDeployed(journal, dir);
    if (since?.changes.length)
      warnings.push(changedSinceError(dir, since.entry.time, since.changes, 'deploying over it').message);
    if (contents) {
      const plan = planPackage(journal, dir, contents);
      if (plan.leftOut.length) notes.push(leftOutNote(plan.leftOut));
      return { ...result, diff: plan.diff, changed: plan.changed, written: false };
    }
    const plan = planDocument(result.file, skillFile);
    return { ...result, diff: plan.diff, changed: plan.changed, written: false };
  }

  const createdDir = firstMissing(dir);
  try {
    return underSkillLock(journal, () => {
      const recovered = recoverSwap(journal, dir);
      const extra = recovered ? { recovered } : {};
      if (contents) {
        const plan = planPackage(journal, dir, contents);
        if (!plan.changed) return { ...result, diff: '', changed: false, written: false, ...extra };
        if (plan.changedSince) {
          const { time, changes } = plan.changedSince;
          if (!o.force) throw changedSinceError(dir, time, changes, 'deploying over it');
          notes.push(`deployed over what was changed since (${changes.join(', ')}); --rollback puts it back`);
        }
        if (plan.leftOut.length) notes.push(leftOutNote(plan.leftOut));
        const backup = writePackage(journal, dir, run, plan, createdDir);
        return { ...result, diff: plan.diff, changed: true, written: true, ...(backup ? { backup } : {}), ...extra };
      }
      const plan = planDocument(result.file, skillFile);
      if (!plan.changed) return { ...result, diff: '', changed: false, written: false, ...extra };
      const since = changesSinceDeployed(journal, dir);
      if (since?.changes.length && !o.force)
        throw changedSinceError(dir, since.entry.time, since.changes, 'deploying over it');
      const backup = writeDocument(journal, result.file, run, plan.content, plan.before, createdDir);
      return { ...result, diff: plan.diff, changed: true, written: true, ...(backup ? { backup } : {}), ...extra };
    });
  } finally {
    // Nothing of the lock's or of a deployment undone stays where nothing was before.
    tidyJournal(folder, name);
    if (createdDir) removeEmptyUpTo(folder, createdDir);
  }
}

const leftOutNote = (paths: string[]) =>
  `not carried over into the new folder, being no part of a package: ${paths.join(', ')} (kept with the folder it replaces, for --rollback)`;

function planDocument(file: string, skillFile: string) {
  const content = Buffer.from(skillFile, 'utf8');
  const before = fs.existsSync(file) ? fs.readFileSync(file) : undefined;
  const changed = !before?.equals(content);
  const diff = changed
    ? unifiedDiff(before?.toString('utf8') ?? '', content.toString('utf8'), {
        before: before ? file : '(nothing)',
        after: file,
      })
    : '';
  return { content, before, changed, diff };
}

/** Writes `SKILL.md`, the file it replaces kept first; returns where. */
function writeDocument(
  journal: string,
  file: string,
  run: string,
  content: Buffer,
  before: Buffer | undefined,
  createdDir: string | undefined,
): string | undefined {
  const entryDir = nextEntryDir(journal);
  fs.mkdirSync(entryDir, { recursive: true });
  // The replaced file is kept before anything is overwritten.
  if (before) writeFileAtomic(path.join(entryDir, 'previous'), before);
  const entry: DocumentEntry = {
    file,
    run,
    time: new Date().toISOString(),
    deployed_sha256: sha256(content),
    previous: before ? { mode: fs.statSync(file).mode & 0o7777 } : null,
    ...(createdDir ? { created_dir: createdDir } : {}),
  };
  writeJsonAtomic(path.join(entryDir, 'deploy.json'), entry);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, content);
  return before ? path.join(entryDir, 'previous') : undefined;
}
