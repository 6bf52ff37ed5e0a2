/**
 * optimizer.step(): turn the selected changes into a candidate skill. In `patch` mode the edits
 * are applied in order, with a report per edit; `rewrite_from_suggestions` asks the optimizer
 * to rewrite the whole skill from the selected suggestions; `full_rewrite_minibatch` takes the
 * merged complete candidate. A patch applies to the whole package; a rewrite is of `SKILL.md`,
 * the package's other files kept. Rewrites keep the current protected regions whatever the model
 * wrote, and a candidate over the token limit is not used.
 */
import { countTokens } from '../../skill/document.ts';
import type { Edit, EditReport } from '../../skill/edits.ts';
import { applyPackageEdits } from '../../skill/package/edits.ts';
import { keepProtectedRegions } from '../../skill/regions.ts';
import type { SkillPackage } from '../../skill/package/package.ts';
import { ask, type OptimizerContext } from '../optimizer-model/ask.ts';
import { loadPrompt } from '../../prompt-files.ts';
import { RewriteReplySchema, type SkillCandidate, type Suggestion } from '../../protocol/optimizer.ts';

export interface UpdateResult {
  /** The candidate skill, or undefined when no usable candidate came out (the step is skipped). */
  candidate?: string;
  reports?: EditReport[];
  changeSummary?: string[];
  reason?: string;
}

function withinLimit(candidate: string, maxTokens: number): boolean {
  return maxTokens <= 0 || countTokens(candidate) <= maxTokens;
}

export interface PatchResult {
  candidate: SkillPackage;
  reports: EditReport[];
}

/** The edits applied in order to the package: `SKILL.md` within `maxTokens`, all its text within `maxPackageTokens`. */
export function applyPatch(
  pkg: SkillPackage,
  edits: Edit[],
  limits: {
    maxTokens: number;
    maxPackageTokens: number;
    singleDocument?: boolean;
    description?: 'editable' | 'protected';
  },
): PatchResult {
  const { package: candidate, reports } = applyPackageEdits(pkg, edits, limits);
  return { candidate, reports };
}

export async function rewriteFromSuggestions(
  ctx: OptimizerContext,
  args: {
    skill: string;
    suggestions: Suggestion[];
    stepBufferText: string;
    maxTokens: number;
    reasoningEffort?: OptimizerContext['reasoningEffort'];
    outputTokens: number;
  },
): Promise<UpdateResult> {
  if (args.suggestions.length === 0) return { reason: 'no suggestions' };
  const sections = [
    `## Current Skill\n${args.skill}`,
    `## Selected Revise Suggestions (${args.suggestions.length} total)\n${JSON.stringify(args.suggestions, null, 2)}`,
  ];
  if (args.stepBufferText.trim()) sections.push(`## Previous Steps in This Epoch\n${args.stepBufferText}`);
  sections.push('Rewrite the complete skill so that it carries out these suggestions, and return it in `new_skill`.');
  const reply = await ask(ctx, {
    purpose: 'rewrite',
    system: loadPrompt('rewrite_skill', ctx.env),
    user: sections.join('\n\n'),
    schema: RewriteReplySchema,
    schemaName: 'rewrite',
    meta: { kind: 'rewrite', skill: args.skill, suggestions: args.suggestions },
    maxTokens: args.outputTokens,
    reasoningEffort: args.reasoningEffort,
    fallback: 'the step is skipped',
  });
  if (!reply?.new_skill.trim()) return { reason: 'the rewrite gave no new skill' };
  const candidate = keepProtectedRegions(args.skill, reply.new_skill);
  if (!withinLimit(candidate, args.maxTokens))
    return { reason: `the rewritten skill is over the limit of ${args.maxTokens} tokens` };
  const summary = Array.isArray(reply.change_summary) ? reply.change_summary : [reply.change_summary];
  return { candidate, changeSummary: summary.map(String) };
}

export function takeFullRewrite(skill: string, candidates: SkillCandidate[], maxTokens: number): UpdateResult {
  const chosen = candidates.find((c) => c.new_skill.trim());
  if (!chosen) return { reason: 'no complete candidate skill' };
  const candidate = keepProtectedRegions(skill, chosen.new_skill);
  if (!withinLimit(candidate, maxTokens))
    return { reason: `the candidate skill is over the limit of ${maxTokens} tokens` };
  const summary = Array.isArray(chosen.change_summary) ? chosen.change_summary : [chosen.change_summary];
  return { candidate, changeSummary: summary.map(String) };
}
