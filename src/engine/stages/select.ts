/**
 * Gradient clipping: keep at most `budget` changes this step. When there are more, the
 * optimizer ranks them and the chosen ones are applied in its order of priority; a budget of 0
 * selects nothing. In autonomous mode the optimizer first decides the budget itself.
 */
import { ask, type OptimizerContext } from '../optimizer-model/ask.ts';
import { loadPrompt } from '../../prompt-files.ts';
import { metaSkillBlock } from '../optimizer-model/prompts.ts';
import { LrReplySchema, PAYLOAD, RankReplySchema, type UpdateItem } from '../../protocol/optimizer.ts';
import type { LrDecision } from '../../run/records.ts';

const q = (v: unknown) => JSON.stringify(v);

/** One line per item in ranking and learning-rate prompts. */
export function describeItem(i: UpdateItem): string {
  const parts: string[] = [];
  if ('op' in i) {
    parts.push(`op=${String(i.op)}`);
    if (i.target) parts.push(`target=${q(i.target)}`);
    if (i.content) parts.push(`content=${q(i.content)}`);
  } else if ('new_skill' in i) {
    parts.push(`title=${q(i.title)}`, `change_summary=${q(i.change_summary)}`);
    if (i.source_type) parts.push(`source=${String(i.source_type)}`);
    parts.push(`new_skill_preview=${q(i.new_skill)}`);
  } else {
    parts.push(`type=${String(i.type)}`, `title=${q(i.title)}`, `instruction=${q(i.instruction)}`);
    if (i.priority_hint) parts.push(`priority=${String(i.priority_hint)}`);
  }
  if (i.support_count !== undefined) parts.push(`support=${String(i.support_count)}`);
  return parts.join('  ');
}

export interface SelectResult {
  items: UpdateItem[];
  /** How the selection was made. */
  how: 'all' | 'ranked' | 'ranked_by_merge' | 'fallback_truncated' | 'budget_zero';
  ranking?: unknown;
}

/** The indices an optimizer chose: valid, distinct, at most `budget`, in its order. */
export function pickIndices(raw: unknown[], n: number, budget: number): number[] {
  const out: number[] = [];
  for (const v of raw) {
    if (out.length >= budget) break;
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < n && !out.includes(v)) out.push(v);
  }
  return out;
}

/**
 * The changes to apply: all when they fit the budget; else the first `budget` when the merge
 * already ordered them for this budget (`rankedFor`); else those the optimizer ranks highest.
 */
export async function rankAndSelect(
  ctx: OptimizerContext,
  skill: string,
  items: UpdateItem[],
  budget: number,
  metaSkill: string,
  rankedFor?: number,
): Promise<SelectResult> {
  if (budget <= 0) return { items: [], how: 'budget_zero' };
  if (items.length <= budget) return { items, how: 'all' };
  if (rankedFor === budget) return { items: items.slice(0, budget), how: 'ranked_by_merge' };
  const { label } = PAYLOAD[ctx.mode];
  const sections = [];
  const meta = metaSkillBlock(metaSkill);
  if (meta) sections.push(meta);
  sections.push(`## Current Skill\n${skill}`);
  sections.push(
    `## Pool of ${label} (${items.length}, budget=${budget})\n${items.map((it, i) => `[${i}] ${describeItem(it)}`).join('\n')}`,
  );
  sections.push(`Choose the ${budget} most important ${label}, as 0-based indices, most important first.`);
  const reply = await ask(ctx, {
    purpose: 'ranking',
    system: loadPrompt('ranking'),
    user: sections.join('\n\n'),
    schema: RankReplySchema,
    schemaName: 'ranking',
    meta: { kind: 'rank', mode: ctx.mode, skill, items, budget },
    fallback: `keeping the first ${budget}`,
  });
  const chosen = reply ? pickIndices(reply.selected_indices, items.length, budget) : [];
  if (chosen.length > 0) return { items: chosen.flatMap((i) => items[i] ?? []), how: 'ranked', ranking: reply };
  return { items: items.slice(0, budget), how: 'fallback_truncated', ranking: reply };
}

/** A non-negative integer from whatever the model wrote, or undefined. */
export function parseLearningRate(raw: unknown): number | undefined {
  if (typeof raw === 'boolean' || raw === null || raw === undefined) return undefined;
  if (typeof raw === 'number') return Number.isInteger(raw) ? Math.max(0, raw) : undefined;
  const m = String(raw).match(/-?\d+/);
  return m ? Math.max(0, Number.parseInt(m[0], 10)) : undefined;
}

export async function decideLearningRate(
  ctx: OptimizerContext,
  args: {
    skill: string;
    items: UpdateItem[];
    rolloutHard: number;
    rolloutSoft: number;
    rolloutN: number;
    stepBufferText: string;
    metaSkill: string;
  },
): Promise<LrDecision> {
  const { label } = PAYLOAD[ctx.mode];
  const sections = [];
  const meta = metaSkillBlock(args.metaSkill);
  if (meta) sections.push(meta);
  sections.push(`## Current Skill\n${args.skill}`);
  sections.push(
    `## Current Step Evidence\nrollout_n: ${args.rolloutN}\nrollout_hard: ${args.rolloutHard.toFixed(6)}\nrollout_soft: ${args.rolloutSoft.toFixed(6)}\nproposed_update_items: ${args.items.length}\nupdate_item_type: ${label}`,
  );
  sections.push(`## Proposed ${label}\n${args.items.map((it, i) => `[${i}] ${describeItem(it)}`).join('\n')}`);
  if (args.stepBufferText.trim()) sections.push(`## Previous Steps in This Epoch\n${args.stepBufferText}`);
  sections.push(`How many of these ${label} should be applied in this step?`);
  const reply = await ask(ctx, {
    purpose: 'lr_autonomous',
    system: loadPrompt('lr_autonomous'),
    user: sections.join('\n\n'),
    schema: LrReplySchema,
    schemaName: 'learning_rate',
    fallback: 'applying none this step',
    meta: {
      kind: 'lr_autonomous',
      mode: ctx.mode,
      skill: args.skill,
      items: args.items,
      rolloutHard: args.rolloutHard,
      rolloutN: args.rolloutN,
    },
  });
  const raw = reply ? parseLearningRate(reply.learning_rate) : undefined;
  const decided = raw ?? 0;
  const chosen = Math.min(decided, args.items.length);
  return {
    learning_rate: chosen,
    raw_learning_rate: raw ?? null,
    available_update_items: args.items.length,
    clamped: chosen !== decided,
    fallback: raw === undefined,
    reasoning: reply?.reasoning ?? '',
    confidence: reply?.confidence ?? '',
    risk_notes: reply?.risk_notes ?? [],
  };
}
