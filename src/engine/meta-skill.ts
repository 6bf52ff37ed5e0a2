/**
 * Optimizer state at the epoch boundary: notes for the optimizer (not the target) on which
 * changes help this skill, used in analyst, merge, ranking and learning-rate prompts from the
 * next epoch on. The skill itself never contains them.
 */
import { ask, type OptimizerContext } from './ask.ts';
import { comparisonText } from './pairs.ts';
import { loadPrompt } from './prompts.ts';
import { MetaSkillReplySchema, type ComparisonPair } from './protocol.ts';

export async function writeMetaSkill(
  ctx: OptimizerContext,
  args: { prevSkill: string; currSkill: string; previous: string; pairs: ComparisonPair[] },
): Promise<{ reasoning: string; content: string } | undefined> {
  const previous = args.previous.trim()
    ? `Judge whether these notes improved or harmed the changes proposed since, then revise them.\n\n${args.previous.trim()}`
    : '(no notes yet: this is the first update)';
  const user = [
    `## Previous Epoch Last-Step Skill\n${args.prevSkill}`,
    `## Current Epoch Last-Step Skill\n${args.currSkill}`,
    `## Previous Optimizer Meta Skill\n${previous}`,
    `## Longitudinal Comparison (the same tasks under both skills)\n${comparisonText(args.pairs)}`,
  ].join('\n\n');
  const reply = await ask(ctx, {
    purpose: 'meta_skill',
    system: loadPrompt('meta_skill', ctx.env),
    user,
    schema: MetaSkillReplySchema,
    schemaName: 'meta_skill',
    fallback: 'the notes stay as they were',
    meta: { kind: 'meta_skill', prevSkill: args.prevSkill, currSkill: args.currSkill, previous: args.previous, pairs: args.pairs },
  });
  if (!reply || !reply.meta_skill_content.trim()) return undefined;
  return { reasoning: reply.reasoning.trim(), content: reply.meta_skill_content.trim() };
}
