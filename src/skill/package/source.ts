/**
 * Where a skill comes from: what a user writes for `--skill` (or `skill:` in a config) turned
 * into a `SkillPackage`, and the place it was read from.
 *
 * The spec is one of:
 * - a Markdown file (any file that is not an archive), read exactly as `loadSkill` reads it,
 *   with its errors and `startBlank`: a single-document package, not held to the front-matter
 *   rules (a single document need have none). An empty spec, or a path to nothing, is `loadSkill`'s
 *   too: an error, or a blank skill with `startBlank`.
 * - a folder holding `SKILL.md`: the whole package (see `readPackageDir`).
 * - a `.skill` or `.zip` archive, as skill-creator's `package_skill.py` writes it (see
 *   `packageFromArchive`).
 * - an installed skill, `AGENT:NAME`, in the folder where that agent reads skills:
 *   `claude:pdf`, `codex:NAME`, `copilot:NAME`, `cursor:NAME`, `agents:NAME` (the shared
 *   `.agents/skills`). `AGENT:NAME` looks in the project (`options.project`, else the working
 *   directory) first, then in the user's own folder (`~/.claude/skills` and the like);
 *   `project:AGENT:NAME` and `user:AGENT:NAME` look in that one place only. A file whose name
 *   has this form is named with a path (`./claude:pdf`).
 *
 * A package (every kind but the Markdown file) must have front matter that keeps the Agent Skills
 * rules; a broken one is a `PackageError` ('front-matter') naming its `SKILL.md` and each rule.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEPLOY_AGENTS, type DeployAgent } from '../../deploy/agents.ts';
import { skillsFolder } from '../../deploy/places.ts';
import { resolveConfigPath } from '../../util/paths.ts';
import { frontMatterProblems } from '../agent-skill.ts';
import { loadSkill } from '../document.ts';
import { isArchivePath, readPackageArchive } from './archive.ts';
import { PackageError } from './errors.ts';
import { DEFAULT_LIMITS, type PackageLimits, readPackageDir } from './folder.ts';
import { type SkillPackage, SKILL_FILE } from './package.ts';

export type InstalledScope = 'project' | 'user';

/** Where a skill was read from; `path` is the file or folder read. */
export type SkillSource =
  /** A single Markdown document; `blank` when it did not exist and `startBlank` made it empty. */
  | { kind: 'document'; path: string; blank: boolean }
  | { kind: 'folder'; path: string }
  /** `name`: the folder the archive was packed from. */
  | { kind: 'archive'; path: string; name: string }
  | { kind: 'installed'; path: string; agent: DeployAgent; scope: InstalledScope; name: string };

export interface LoadedSkill {
  pkg: SkillPackage;
  source: SkillSource;
}

export interface LoadSkillOptions {
  /** A missing Markdown file (or an empty spec) starts an empty skill instead of failing. */
  startBlank?: boolean;
  /** The config key or flag the spec came from, named in errors (as `loadSkill` names it). */
  key?: string;
  /** A relative path is looked for from the working directory, then from here (a config's folder). */
  baseDir?: string;
  /** The project an installed skill's project scope means (default: the working directory). */
  project?: string;
  /** The environment that places the user's skill folders (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME…). */
  env?: Record<string, string | undefined>;
  limits?: PackageLimits;
}

export interface InstalledSpec {
  agent: DeployAgent;
  /** Absent: the project, then the user. */
  scope?: InstalledScope;
  name: string;
}

const INSTALLED = new RegExp(`^(?:(project|user):)?(${DEPLOY_AGENTS.join('|')}):([^/\\\\:]+)$`);

/** The installed skill `spec` names (`claude:pdf`, `user:codex:NAME`), or undefined when it names a path. */
export function parseInstalledSpec(spec: string): InstalledSpec | undefined {
  const m = INSTALLED.exec(spec);
  if (!m || m[3] === '.' || m[3] === '..') return undefined;
  return { agent: m[2] as DeployAgent, ...(m[1] ? { scope: m[1] as InstalledScope } : {}), name: m[3]! };
}

/** Reads the skill `spec` names (see the top of this file for the forms it takes). */
export function loadSkillPackage(spec: string, options: LoadSkillOptions = {}): LoadedSkill {
  const limits = options.limits ?? DEFAULT_LIMITS;
  const installed = parseInstalledSpec(spec);
  if (installed) return withKey(options.key, () => loadInstalled(installed, options, limits));
  const file = options.baseDir ? resolveConfigPath(spec, options.baseDir) : spec;
  const stat = file ? fs.statSync(file, { throwIfNoEntry: false }) : undefined;
  if (stat?.isDirectory())
    return withKey(options.key, () => ({
      pkg: checked(readPackageDir(file, limits), path.join(file, SKILL_FILE)),
      source: { kind: 'folder', path: file },
    }));
  if (stat?.isFile() && isArchivePath(file))
    return withKey(options.key, () => {
      const { name, pkg } = readPackageArchive(file, limits);
      return { pkg: checked(pkg, `${file}: ${name}/${SKILL_FILE}`), source: { kind: 'archive', path: file, name } };
    });
  const skill = loadSkill(file, { startBlank: options.startBlank, key: options.key });
  return { pkg: { skill }, source: { kind: 'document', path: file, blank: !stat } };
}

/** The folder of the installed skill `spec`: the project's first, then the user's (or the scope it names). */
export function installedSkillDir(
  spec: InstalledSpec,
  options: Pick<LoadSkillOptions, 'project' | 'env'> = {},
): { dir: string; scope: InstalledScope } {
  const env = options.env ?? process.env;
  const scopes: InstalledScope[] = spec.scope ? [spec.scope] : ['project', 'user'];
  const looked: string[] = [];
  for (const scope of scopes) {
    const folder = skillsFolder(
      spec.agent,
      scope === 'user' ? { user: true } : { project: options.project ?? process.cwd() },
      env,
    );
    const dir = path.join(folder, spec.name);
    looked.push(dir);
    // A folder there is the skill, whole or broken: it is what the agent would find first.
    if (fs.existsSync(dir)) return { dir, scope };
  }
  const shown = `${spec.scope ? `${spec.scope}:` : ''}${spec.agent}:${spec.name}`;
  throw new PackageError(
    'not-found',
    shown,
    `no installed skill '${spec.name}' for ${spec.agent}: looked for ${looked.join(' and ')}`,
  );
}

function loadInstalled(spec: InstalledSpec, options: LoadSkillOptions, limits: PackageLimits): LoadedSkill {
  const { dir, scope } = installedSkillDir(spec, options);
  return {
    pkg: checked(readPackageDir(dir, limits), path.join(dir, SKILL_FILE)),
    source: { kind: 'installed', path: dir, agent: spec.agent, scope, name: spec.name },
  };
}

/** `pkg`, once its `SKILL.md` (named `where` in the error) keeps the front-matter rules. */
function checked(pkg: SkillPackage, where: string): SkillPackage {
  const problems = frontMatterProblems(pkg.skill);
  if (problems.length)
    throw new PackageError(
      'front-matter',
      where,
      `${where} breaks the Agent Skills rules for front matter: ${problems.join('; ')}`,
    );
  return pkg;
}

/** Runs `read`, adding the config key or flag the spec came from to a package's error. */
function withKey(key: string | undefined, read: () => LoadedSkill): LoadedSkill {
  try {
    return read();
  } catch (err) {
    if (!key || !(err instanceof PackageError)) throw err;
    throw new PackageError(err.problem, err.file, `${err.message} (from ${key})`);
  }
}
