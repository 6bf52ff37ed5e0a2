/**
 * The skills an evaluation scores, as `--skill` names them: a `SKILL.md` or any skill file as it
 * is, a folder, a `.skill` archive or an installed skill (`claude:pdf`) as a package, or `none`:
 * no skill at all, the baseline of what a skill costs and gains (a file named `none` is `./none`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../errors.ts';
import { isArchivePath } from '../../skill/package/archive.ts';
import type { SkillPackage } from '../../skill/package/package.ts';
import { loadSkillPackage, parseInstalledSpec } from '../../skill/package/source.ts';
import { FileRefused, readRegularFileSync } from '../../util/read-file.ts';

export const slug = (s: string) => s.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^_+|_+$/g, '') || 'x';

/** `--skill none`: the target with no skill. */
export const NO_SKILL = 'none';

/** The largest skill file read: a skill is a prompt, thousands of tokens at most. */
const MAX_SKILL_BYTES = 2 * 1024 * 1024;

/** A skill file as it is (up to `MAX_SKILL_BYTES`); a folder, a `.skill` archive or an installed skill (`claude:pdf`) as a package. */
function readSkill(spec: string): { file: string; pkg: SkillPackage } {
  if (spec === NO_SKILL) return { file: NO_SKILL, pkg: { skill: '' } };
  const file = path.resolve(spec);
  const isFolder = fs.statSync(file, { throwIfNoEntry: false })?.isDirectory();
  if (isFolder || isArchivePath(spec) || (parseInstalledSpec(spec) && !fs.existsSync(file))) {
    const loaded = loadSkillPackage(spec, { key: '--skill' });
    return { file: loaded.source.path, pkg: loaded.pkg };
  }
  try {
    return { file, pkg: { skill: readRegularFileSync(file, MAX_SKILL_BYTES, 'a skill file').toString('utf8') } };
  } catch (err) {
    if (!(err instanceof FileRefused)) throw err;
    throw new UserError(err.reason === 'missing' ? `skill file not found: ${file}` : `--skill: ${err.message}`);
  }
}

export function readSkills(specs: readonly string[]): { file: string; label: string; pkg: SkillPackage }[] {
  if (specs.length === 0) throw new UserError('name a skill to evaluate with --skill FILE');
  const labels = new Set<string>();
  return specs.map((spec) => {
    const { file, pkg } = readSkill(spec);
    const base = file === NO_SKILL ? 'no_skill' : slug(path.basename(file, path.extname(file)));
    let label = base;
    for (let k = 2; labels.has(label); k++) label = `${base}-${k}`;
    labels.add(label);
    return { file, label, pkg };
  });
}
