/**
 * `skillopt tasks draft --triggers`: a trigger eval set drafted by the optimizer model from a
 * skill, in skill-creator's format, each query marked `"draft": true`. A person reads each one,
 * fixes or deletes it and removes the mark; the triggers env refuses a set that still holds
 * drafts unless told to accept them (`env.accept_unreviewed`, `--accept-unreviewed`), since a
 * model grading its own questions measures little.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/schema.ts';
import { UserError } from '../errors.ts';
import { shippedDistractors } from '../envs/triggers/distractors.ts';
import { buildRoleModels } from '../model/stack.ts';
import { completeJson } from '../model/structured.ts';
import { loadPrompt } from '../prompt-files.ts';
import { DraftTriggersReplySchema } from '../protocol/optimizer.ts';
import { writeFileAtomic } from '../run/atomic.ts';
import { skillListing } from '../skill/agent-skill.ts';
import { loadSkillPackage } from '../skill/package/source.ts';

export interface DraftOptions {
  config: Config;
  /** The skill, as `--skill` takes it. */
  from: string;
  out: string;
  /** Queries of each kind. */
  count: number;
  force?: boolean;
  say?: (line: string) => void;
}

export async function draftTriggerSet(o: DraftOptions): Promise<{ file: string; should: number; shouldNot: number }> {
  const say = o.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  const { pkg } = loadSkillPackage(o.from, { key: '--from' });
  const listing = skillListing(pkg.skill);
  if (!listing.name || !listing.description)
    throw new UserError(
      `--from ${o.from}: the skill needs front matter with a name and a description to draft triggers for`,
    );
  const file = path.resolve(o.out);
  if (fs.existsSync(file) && !o.force)
    throw new UserError(`--out ${o.out} exists: give another file, or --force to replace it`);
  if (!/\.json$/i.test(file)) throw new UserError(`--out ${o.out}: a trigger eval set is written as JSON (FILE.json)`);
  const others = shippedDistractors().map((d) => ({
    name: d.name,
    description: skillListing(d.markdown).description ?? '',
  }));
  const user = [
    `## The skill\n${pkg.skill.trim()}`,
    `## Other skills the agent will see\n${others.map((d) => `- ${d.name}: ${d.description}`).join('\n')}`,
    `## How many\nWrite ${o.count} requests that should trigger the skill and ${o.count} near misses that should not.`,
  ].join('\n\n');
  const models = await buildRoleModels(o.config);
  try {
    say(
      `asking the optimizer (${models.optimizer.id}) for ${o.count} + ${o.count} trigger queries for ${listing.name}…`,
    );
    const { value } = await completeJson(models.optimizer, {
      purpose: 'draft_triggers',
      system: loadPrompt('draft_triggers'),
      messages: [{ role: 'user', content: user }],
      schema: DraftTriggersReplySchema,
      schemaName: 'trigger_queries',
      meta: { kind: 'draft_triggers', skill: pkg.skill, count: o.count, others },
    });
    const seen = new Set<string>();
    const queries = value.queries
      .map((q) => ({ query: q.query.trim(), should_trigger: q.should_trigger, draft: true }))
      .filter((q) => q.query && !seen.has(q.query.toLowerCase()) && seen.add(q.query.toLowerCase()));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    writeFileAtomic(file, `${JSON.stringify(queries, null, 2)}\n`);
    const should = queries.filter((q) => q.should_trigger).length;
    return { file, should, shouldNot: queries.length - should };
  } finally {
    models.close();
  }
}
