/**
 * The other skills an activation rollout installs beside the one under test, so that loading it
 * is a choice among several, as on a developer's machine: a shipped set of realistic skills
 * (`prompts/distractors/`, in the shapes of public skills) and any the user names
 * (`env.distractor_skills`: folders, `.skill` archives or installed skills such as `claude:pdf`).
 * The agent's own built-in skills come on top, from the agent itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROMPTS_DIR } from '../../prompt-files.ts';
import { UserError } from '../../errors.ts';
import { skillListing } from '../../skill/agent-skill.ts';
import { loadSkillPackage } from '../../skill/package/source.ts';
import type { SkillListing } from '../../model/types.ts';

const SHIPPED = path.join(PROMPTS_DIR, 'distractors');

/** The shipped distractor skills, by folder name. */
export function shippedDistractors(): SkillListing[] {
  return fs
    .readdirSync(SHIPPED)
    .sort()
    .map((name) => ({ name, markdown: fs.readFileSync(path.join(SHIPPED, name, 'SKILL.md'), 'utf8') }));
}

/** The distractors a run installs; one named like the skill under test is refused. */
export function distractorSkills(
  opts: { shipped: boolean; extra: string[]; baseDir: string },
  skillName: string | undefined,
): SkillListing[] {
  const list = opts.shipped ? shippedDistractors() : [];
  for (const spec of opts.extra) {
    const { pkg } = loadSkillPackage(spec, { key: 'env.distractor_skills', baseDir: opts.baseDir });
    const name = skillListing(pkg.skill).name;
    if (!name) throw new UserError(`env.distractor_skills: ${spec} has no name in its front matter`);
    list.push({ name, markdown: pkg.skill });
  }
  const names = new Set<string>();
  for (const d of list) {
    if (d.name === skillName)
      throw new UserError(
        `env.distractor_skills: ${d.name} has the name of the skill under test; leave it out (or set env.distractors: none)`,
      );
    if (names.has(d.name)) throw new UserError(`env.distractor_skills: two distractor skills are named ${d.name}`);
    names.add(d.name);
  }
  return list;
}
