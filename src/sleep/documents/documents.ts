/**
 * The live documents a night trains: the managed skill (`<claude_home>/skills/<name>/SKILL.md`,
 * or `documents.skill`), the project's memory file when asked for (`CLAUDE.md` or `AGENTS.md`),
 * and, with the fan-out, the skills sessions invoked. Each is read once, at the start of the
 * night, and pinned: the SHA-256 of its bytes ('' when it does not exist) and its real path.
 * A document that is not valid UTF-8, a link, or unreadable refuses the night.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isArchivePath } from '../../skill/package/archive.ts';
import { installedSkillDir, parseInstalledSpec } from '../../skill/package/source.ts';
import { UserError } from '../../errors.ts';
import { expandHome, type SleepConfig } from '../config.ts';
import { splitDocument } from './learned-block.ts';
import { readLive, realPathOf, sha256Bytes } from '../adoption/transaction.ts';
import { type LivePackage, livePackage } from './package-skill.ts';
import { SKILL_FILE } from '../../skill/package/package.ts';

export interface LiveDocument {
  /** A skill's name, or the memory file's name. */
  name: string;
  kind: 'skill' | 'memory';
  path: string;
  realpath: string;
  exists: boolean;
  /** SHA-256 of the bytes as read ('' when the file does not exist). */
  sha256: string;
  /** The text as read ('' when the file does not exist). */
  text: string;
  /** What the night trains: the text, or for a skill that does not exist yet, a new skill's scaffold. */
  working: string;
  /** A skill whose folder holds other files: the whole package, pinned (`package-skill.ts`). */
  package?: LivePackage;
}

export function skillScaffold(name: string): string {
  return [
    '---',
    `name: ${name}`,
    'description: Conventions and procedures learned from your own sessions with coding agents. Use them in every task.',
    '---',
    '',
    `# ${name}`,
    '',
    'Rules learned from your sessions with coding agents, adopted by you.',
    '',
  ].join('\n');
}

const decoder = new TextDecoder('utf-8', { fatal: true });

export function readDocument(file: string, kind: LiveDocument['kind'], name: string): LiveDocument {
  const abs = path.resolve(file);
  let bytes: Buffer | null;
  try {
    bytes = readLive(abs);
  } catch (err) {
    throw new UserError(
      err instanceof UserError ? err.message : `${abs}: cannot read ${name}: ${(err as Error).message}`,
    );
  }
  let text = '';
  if (bytes !== null) {
    try {
      text = decoder.decode(bytes);
    } catch {
      throw new UserError(`${abs}: ${name} is not valid UTF-8 text`);
    }
  }
  splitDocument(text, abs);
  const pkg = kind === 'skill' && bytes !== null ? livePackage(abs) : undefined;
  if (pkg && pkg.pins[SKILL_FILE]?.sha256 !== sha256Bytes(bytes!))
    throw new UserError(`${abs} changed while the night read its package: run the night again`);
  return {
    name,
    kind,
    path: abs,
    realpath: realPathOf(abs),
    exists: bytes !== null,
    sha256: bytes === null ? '' : sha256Bytes(bytes),
    text,
    working: bytes === null && kind === 'skill' ? skillScaffold(name) : text,
    ...(pkg ? { package: pkg } : {}),
  };
}

/**
 * The managed skill's file: `documents.skill` (a `SKILL.md`, the skill's folder, or an installed
 * skill such as `claude:NAME` or `user:codex:NAME`), or `<claude_home>/skills/<skill_name>/SKILL.md`.
 * An archive is refused: a night's proposal is adopted into a live skill.
 */
export function managedSkillPath(config: SleepConfig, claudeHome: string, project: string): string {
  const d = config.documents;
  if (!d.skill) return path.join(claudeHome, 'skills', d.skill_name, 'SKILL.md');
  const installed = parseInstalledSpec(d.skill);
  if (installed) {
    try {
      return path.join(installedSkillDir(installed, { project }).dir, SKILL_FILE);
    } catch (err) {
      throw new UserError(`documents.skill: ${(err as Error).message}`);
    }
  }
  const file = path.resolve(project, expandHome(d.skill));
  if (isArchivePath(file))
    throw new UserError(
      `documents.skill: ${d.skill} is an archive; Sleep adopts its proposals into a live skill: give the skill's folder or its SKILL.md`,
    );
  return fs.statSync(file, { throwIfNoEntry: false })?.isDirectory() ? path.join(file, SKILL_FILE) : file;
}

/** The managed skill's name: its folder's. */
export function managedSkillName(skillPath: string): string {
  return path.basename(path.dirname(skillPath));
}
