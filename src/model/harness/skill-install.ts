/**
 * Where an agent reads a skill, and the skill as that file. Two ways in, which reach the model
 * differently: a skill folder (`<dir>/<name>/SKILL.md`) is listed to the model by its name and
 * description, and its body arrives only when the agent opens the file; an instructions file
 * (`AGENTS.md`, `CLAUDE.md`, `.github/copilot-instructions.md`) is sent in full with the first
 * request. `skill` mode installs the folder and tells the agent in the prompt to read it first
 * (the skill as deployed, plus one read per rollout); `instructions` writes the instructions file
 * only; `both` does both.
 */
import { fill, loadPrompt } from '../../prompt-files.ts';
import { skillListing } from '../../skill/agent-skill.ts';
import { fileBytes, type PackageFiles } from '../../skill/package/package.ts';
import type { SkillListing } from '../types.ts';

export type SkillInstall = 'skill' | 'instructions' | 'both';

export interface SkillLayout {
  /** Folder of skills, relative to the workspace: '.agents/skills'. */
  skillsDir: string;
  /** The instructions file sent in full: 'AGENTS.md'. */
  instructionsFile: string;
}

export interface InstalledSkill {
  /** Workspace-relative files to write (a script with its mode). */
  files: { path: string; content: string | Uint8Array; mode?: number }[];
  /** What replaces the skill's text in the prompt. */
  promptText: string;
  /** The skill's folder, workspace-relative, when one is installed. */
  dir?: string;
}

/** Where each agent reads skills in a project (its workspace), as its documentation gives them. */
export const AGENT_LAYOUTS = {
  codex: { skillsDir: '.agents/skills', instructionsFile: 'AGENTS.md' },
  'claude-code': { skillsDir: '.claude/skills', instructionsFile: 'CLAUDE.md' },
  copilot: { skillsDir: '.github/skills', instructionsFile: '.github/copilot-instructions.md' },
  cursor: { skillsDir: '.cursor/skills', instructionsFile: 'AGENTS.md' },
} as const satisfies Record<string, SkillLayout>;

const FRONT_MATTER = /^---\r?\n[\s\S]*?\r?\n---\r?\n?/;

/** The description of an installed skill whose front matter has none, unless the role's `skill_description` says otherwise. */
export const DEFAULT_SKILL_DESCRIPTION = 'How to do the task in this folder well. Read it before you start.';

/** The skill as a SKILL.md: its own front matter when it has one, else `name` and `description`. */
export function skillMarkdown(skill: string, name: string, description: string): string {
  const body = skill.trim();
  if (FRONT_MATTER.test(body)) return `${body}\n`;
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n\n${body}\n`;
}

/**
 * The files that install `skill`; a package's other files (`packageFiles`) go beside its
 * `SKILL.md`, byte for byte with their modes, so the agent can read its references and run its
 * scripts as it would at home. The instructions file has no folder beside it: with `instructions`
 * alone a package's files are not installed.
 */
export function installSkill(
  skill: string,
  layout: SkillLayout,
  mode: SkillInstall,
  name: string,
  description: string,
  packageFiles?: PackageFiles,
): InstalledSkill {
  if (!skill.trim()) return { files: [], promptText: '' };
  const folder = `${layout.skillsDir}/${name}`;
  const skillPath = `${folder}/SKILL.md`;
  const files: InstalledSkill['files'] = [];
  if (mode !== 'instructions') {
    files.push({ path: skillPath, content: skillMarkdown(skill, name, description) });
    for (const [rel, file] of packageFiles ?? [])
      files.push({ path: `${folder}/${rel}`, content: fileBytes(file), mode: file.mode });
  }
  if (mode !== 'skill') files.push({ path: layout.instructionsFile, content: `${skill.trim()}\n` });
  // With the instructions file the agent already has the text; otherwise it must open the file.
  const promptText =
    mode === 'skill'
      ? fill(loadPrompt('agents/skill_pointer'), { path: skillPath }).trim()
      : fill(loadPrompt('agents/skill_in_instructions'), { file: layout.instructionsFile }).trim();
  return { files, promptText, ...(mode !== 'instructions' ? { dir: folder } : {}) };
}

/**
 * The files of an activation rollout: the skill under test in its folder (named by its front
 * matter, else `name`), with its package files, and each other skill in a folder of its own,
 * all where the agent reads skills. Nothing points to any of them: the agent finds them listed.
 */
export function installForActivation(
  skill: string,
  layout: SkillLayout,
  name: string,
  description: string,
  others: readonly SkillListing[],
  packageFiles?: PackageFiles,
): InstalledSkill {
  const installed = installSkill(skill, layout, 'skill', skillListing(skill).name ?? name, description, packageFiles);
  for (const other of others)
    installed.files.push({ path: `${layout.skillsDir}/${other.name}/SKILL.md`, content: other.markdown });
  return { ...installed, promptText: '' };
}
