/**
 * Deploying a trained skill: a run's `best_skill.md` written as `<skills folder>/<name>/SKILL.md`
 * where an agent reads it, with the `name` and `description` front matter an agent needs (the
 * skill's own, when it has some; both checked against the Agent Skills rules; a description made
 * from the run when none is given), after the diff against what is there, and with the tools its
 * front matter lets the agent use without asking said, the broad ones warned of. Each deployment keeps
 * what it replaced in a journal beside the skills (`.skillopt-deploy/<name>/NNNN/`, a hidden
 * folder no agent reads as a skill), so that `rollback` puts back exactly the previous file (its
 * bytes and mode), or removes the file when the deployment created it.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { DEFAULT_SKILL_DESCRIPTION, skillMarkdown } from '../model/harness/skill-install.ts';
import { readJson, writeFileAtomic, writeJsonAtomic } from '../run/atomic.ts';
import { skillDescriptionProblem, skillNameProblem } from '../skill/agent-skill.ts';
import { frontMatter } from '../skill/regions.ts';
import { unifiedDiff } from '../skill/document.ts';
import { firstMissing } from '../util/paths.ts';
import type { DeployAgent, Scope } from './agents.ts';
import { describeFromRun } from './description.ts';
import { allowedTools, broadTools, frontMatterField } from './front-matter.ts';
import { skillsFolder } from './places.ts';

const JOURNAL = '.skillopt-deploy';

export interface DeployOptions {
  /** The run directory holding `best_skill.md`. */
  run: string;
  agent: DeployAgent;
  scope: Scope;
  /** The skill's folder name and front-matter name (default: the skill's own, else from the run). */
  name?: string;
  description?: string;
  /** Show the diff, write nothing. */
  dryRun?: boolean;
  env?: Record<string, string | undefined>;
}

export interface DeployResult {
  file: string;
  /** The skill's name (its folder). */
  name: string;
  /** The unified diff from what was there (nothing: empty) to what is deployed. */
  diff: string;
  /** The file differs from what was there. */
  changed: boolean;
  written: boolean;
  /** Where the replaced file is kept (absent: there was none, or nothing was written). */
  backup?: string;
  /** The tools the skill's front matter lets the agent use without asking (`allowed-tools`). */
  allowedTools: string[];
  /** Said to the user: defaults taken, what to check. */
  notes: string[];
  /** What the user should look at before an agent uses the skill (broad `allowed-tools`). */
  warnings: string[];
}

/** What a deployment recorded, to undo it. */
interface Entry {
  file: string;
  run: string;
  time: string;
  /** SHA-256 of the file as deployed: a rollback checks the file is still that. */
  deployed_sha256: string;
  /** The file that was there (kept as `previous` beside this record), or null when there was none. */
  previous: { mode: number } | null;
  /** The outermost folder this deployment created (removed again by its rollback, when empty). */
  created_dir?: string;
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

function entriesOf(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir)
      .filter((n) => /^\d{4,}$/.test(n))
      .sort();
  } catch {
    return [];
  }
}

export function deploySkill(o: DeployOptions): DeployResult {
  const run = path.resolve(o.run);
  const best = path.join(run, 'best_skill.md');
  if (!fs.existsSync(best))
    throw new UserError(
      `${o.run}: no best_skill.md here (a run of skillopt train writes it once its first step is done)`,
    );
  const skill = fs.readFileSync(best, 'utf8');
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
  const content = Buffer.from(skillMarkdown(skill, name, description), 'utf8');
  const folder = skillsFolder(o.agent, o.scope, o.env);
  const file = path.join(folder, name, 'SKILL.md');
  const before = fs.existsSync(file) ? fs.readFileSync(file) : undefined;
  const changed = !before?.equals(content);
  const diff = changed
    ? unifiedDiff(before?.toString('utf8') ?? '', content.toString('utf8'), {
        before: before ? file : '(nothing)',
        after: file,
      })
    : '';
  if (!changed || o.dryRun) return { file, name, diff, changed, written: false, allowedTools: tools, notes, warnings };

  const createdDir = firstMissing(path.dirname(file));
  const journal = path.join(folder, JOURNAL, name);
  const last = entriesOf(journal).at(-1);
  const entryDir = path.join(journal, String(last ? Number(last) + 1 : 1).padStart(4, '0'));
  fs.mkdirSync(entryDir, { recursive: true });
  // The replaced file is kept before anything is overwritten.
  if (before) writeFileAtomic(path.join(entryDir, 'previous'), before);
  const entry: Entry = {
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
  return {
    file,
    name,
    diff,
    changed,
    written: true,
    ...(before ? { backup: path.join(entryDir, 'previous') } : {}),
    allowedTools: tools,
    notes,
    warnings,
  };
}

export interface RollbackOptions {
  agent: DeployAgent;
  scope: Scope;
  /** The skill to roll back (default: the one deployed last in this folder). */
  name?: string;
  /** Roll back even when the file was changed since it was deployed. */
  force?: boolean;
  env?: Record<string, string | undefined>;
}

export interface RollbackResult {
  file: string;
  /** 'restored': the previous file is back; 'removed': the deployment had created the file. */
  action: 'restored' | 'removed';
  /** Deployments of this skill still recorded (each can be rolled back in turn). */
  remaining: number;
}

export function rollbackSkill(o: RollbackOptions): RollbackResult {
  const folder = skillsFolder(o.agent, o.scope, o.env);
  const root = path.join(folder, JOURNAL);
  let name = o.name;
  if (!name) {
    // The skill deployed last in this folder.
    const latest = (fs.existsSync(root) ? fs.readdirSync(root) : [])
      .map((n) => ({ n, last: entriesOf(path.join(root, n)).at(-1) }))
      .filter((x) => x.last)
      .map((x) => ({ n: x.n, time: readJson<Entry>(path.join(root, x.n, x.last!, 'deploy.json'))?.time ?? '' }))
      .sort((a, b) => a.time.localeCompare(b.time))
      .at(-1);
    if (!latest) throw new UserError(`nothing to roll back: no deployment by skillopt is recorded in ${folder}`);
    name = latest.n;
  }
  checkName(name, '--name');
  const journal = path.join(root, name);
  const last = entriesOf(journal).at(-1);
  if (!last) throw new UserError(`nothing to roll back: no deployment of '${name}' is recorded in ${folder}`);
  const entryDir = path.join(journal, last);
  const entry = readJson<Entry>(path.join(entryDir, 'deploy.json'));
  if (!entry) throw new UserError(`${entryDir}: its deploy.json is missing; this deployment cannot be rolled back`);
  const file = path.join(folder, name, 'SKILL.md');
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
  }
  fs.rmSync(entryDir, { recursive: true, force: true });
  const remaining = entriesOf(journal).length;
  removeEmptyUpTo(journal, root);
  // The folders the deployment made go too, as long as nothing else is in them.
  if (!entry.previous) removeEmptyUpTo(path.dirname(file), entry.created_dir ?? path.dirname(file));
  return { file, action, remaining };
}

/** Removes `dir` and its parents up to `top` (included) while they are empty. */
function removeEmptyUpTo(dir: string, top: string): void {
  for (let d = dir; d.startsWith(top); d = path.dirname(d)) {
    try {
      fs.rmdirSync(d);
    } catch {
      return; // not empty (or gone)
    }
    if (d === top) return;
  }
}
