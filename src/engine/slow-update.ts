/**
 * Momentum at the epoch boundary: the optimizer compares the previous and the current epoch's
 * skill on the same training items and writes guidance into the skill's protected slow-update
 * field (which edits cannot touch).
 */
import { ask, type OptimizerContext } from './ask.ts';
import { comparisonText } from './pairs.ts';
import { loadPrompt } from './prompts.ts';
import { SlowUpdateReplySchema, type ComparisonPair } from './protocol.ts';

export async function writeSlowUpdate(
  ctx: OptimizerContext,
  args: { prevSkill: string; currSkill: string; guidance: string; pairs: ComparisonPair[] },
): Promise<{ reasoning: string; content: string } | undefined> {
  const previous = args.guidance.trim()
    ? `Judge how well this guidance worked, from the comparison below, before you revise it.\n\n${args.guidance.trim()}`
    : '(no previous guidance: this is the first slow update)';
  const user = [
    `## Previous Epoch's Skill\n${args.prevSkill}`,
    `## Current Epoch's Skill\n${args.currSkill}`,
    `## Previous Slow Update Guidance\n${previous}`,
    `## Longitudinal Comparison (the same ${args.pairs.length} tasks under both skills)\n${comparisonText(args.pairs)}`,
  ].join('\n\n');
  const reply = await ask(ctx, {
    purpose: 'slow_update',
    system: loadPrompt('slow_update', ctx.env),
    user,
    schema: SlowUpdateReplySchema,
    schemaName: 'slow_update',
    fallback: 'no guidance this epoch',
    meta: { kind: 'slow_update', prevSkill: args.prevSkill, currSkill: args.currSkill, guidance: args.guidance, pairs: args.pairs },
  });
  if (!reply || !reply.slow_update_content.trim()) return undefined;
  return { reasoning: reply.reasoning.trim(), content: reply.slow_update_content.trim() };
}
