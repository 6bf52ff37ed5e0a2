/**
 * Which `SKILL.md` a skill name means, for the fan-out: the skill folders of the project
 * (`.agents/skills`, `.claude/skills`, `.cursor/skills`, `.devin/skills`), the user's
 * (`<claude_home>/skills`) and the config's `skill_roots`, each holding `<name>/SKILL.md`. A
 * name found in none is `missing`, in several (different files) `ambiguous`; a name that is not a
 * plain folder name, or a file that leads outside its root, is `rejected`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expandHome } from '../config.ts';

export type Resolution =
  | { status: 'found'; path: string }
  | { status: 'missing' }
  | { status: 'ambiguous'; candidates: string[] }
  | { status: 'rejected'; why: string };

export function skillRoots(project: string, claudeHome: string, extra: string[]): string[] {
  const candidates = [
    ...['.agents', '.claude', '.cursor', '.devin'].map((d) => path.join(project, d, 'skills')),
    path.join(claudeHome, 'skills'),
    ...extra.map((r) => path.resolve(project, expandHome(r))),
  ];
  const out: string[] = [];
  for (const c of candidates) {
    try {
      const real = fs.realpathSync.native(c);
      if (fs.statSync(real).isDirectory() && !out.includes(real)) out.push(real);
    } catch {
      // not there
    }
  }
  return out;
}

export function safeSkillName(name: string): string | undefined {
  const n = name.trim();
  if (!n || n === '.' || n === '..' || n.startsWith('~') || /[\\/:*?"<>|\u0000-\u001f]/.test(n) || /[. ]$/.test(n))
    return undefined;
  return n;
}

export function resolveSkill(name: string, roots: string[]): Resolution {
  const n = safeSkillName(name);
  if (!n) return { status: 'rejected', why: `'${name}' is not a plain skill folder name` };
  const found: string[] = [];
  for (const root of roots) {
    const file = path.join(root, n, 'SKILL.md');
    let real: string;
    try {
      real = fs.realpathSync.native(file);
    } catch {
      continue;
    }
    const rel = path.relative(root, real);
    if (rel.startsWith('..') || path.isAbsolute(rel))
      return { status: 'rejected', why: `${file} leads outside ${root}` };
    if (fs.statSync(real).isFile() && !found.includes(real)) found.push(real);
  }
  if (found.length === 0) return { status: 'missing' };
  if (found.length > 1) return { status: 'ambiguous', candidates: found };
  return { status: 'found', path: found[0]! };
}
