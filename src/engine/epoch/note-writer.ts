/**
 * The two texts written at an epoch boundary from the same longitudinal comparison: the slow
 * update's guidance for the target (momentum) and the meta skill's notes for the optimizer
 * (optimizer state). Each revises the previous one in the light of the comparison.
 */
import { z } from 'zod';
import { ask, type OptimizerContext } from '../optimizer-model/ask.ts';
import { comparisonText } from './comparison-pairs.ts';
import { loadPrompt } from '../../prompt-files.ts';
import type { ComparisonPair } from '../../protocol/optimizer.ts';

interface NoteKind {
  purpose: 'slow_update' | 'meta_skill';
  field: 'slow_update_content' | 'meta_skill_content';
  titles: { prev: string; curr: string; previous: string; comparison: (n: number) => string };
  judgePrevious: string;
  none: string;
  fallback: string;
}

const KINDS: Record<'slow_update' | 'meta_skill', NoteKind> = {
  slow_update: {
    purpose: 'slow_update',
    field: 'slow_update_content',
    titles: {
      prev: "Previous Epoch's Skill",
      curr: "Current Epoch's Skill",
      previous: 'Previous Slow Update Guidance',
      comparison: (n) => `Longitudinal Comparison (the same ${n} tasks under both skills)`,
    },
    judgePrevious: 'Judge how well this guidance worked, from the comparison below, before you revise it.',
    none: '(no previous guidance: this is the first slow update)',
    fallback: 'no guidance this epoch',
  },
  meta_skill: {
    purpose: 'meta_skill',
    field: 'meta_skill_content',
    titles: {
      prev: 'Previous Epoch Last-Step Skill',
      curr: 'Current Epoch Last-Step Skill',
      previous: 'Previous Optimizer Meta Skill',
      comparison: () => 'Longitudinal Comparison (the same tasks under both skills)',
    },
    judgePrevious: 'Judge whether these notes improved or harmed the changes proposed since, then revise them.',
    none: '(no notes yet: this is the first update)',
    fallback: 'the notes stay as they were',
  },
};

export interface EpochNoteInput {
  prevSkill: string;
  currSkill: string;
  /** The previous guidance or notes ('' if none). */
  previous: string;
  pairs: ComparisonPair[];
}

export async function writeEpochNote(
  ctx: OptimizerContext,
  which: 'slow_update' | 'meta_skill',
  args: EpochNoteInput,
): Promise<{ reasoning: string; content: string } | undefined> {
  const k = KINDS[which];
  const previous = args.previous.trim() ? `${k.judgePrevious}\n\n${args.previous.trim()}` : k.none;
  const user = [
    `## ${k.titles.prev}\n${args.prevSkill}`,
    `## ${k.titles.curr}\n${args.currSkill}`,
    `## ${k.titles.previous}\n${previous}`,
    `## ${k.titles.comparison(args.pairs.length)}\n${comparisonText(args.pairs)}`,
  ].join('\n\n');
  const schema = z.object({ reasoning: z.string().default(''), [k.field]: z.string().default('') }).loose();
  const reply = await ask(ctx, {
    purpose: k.purpose,
    system: loadPrompt(which, ctx.env),
    user,
    schema,
    schemaName: which,
    fallback: k.fallback,
    meta:
      which === 'slow_update'
        ? {
            kind: 'slow_update',
            prevSkill: args.prevSkill,
            currSkill: args.currSkill,
            guidance: args.previous,
            pairs: args.pairs,
          }
        : {
            kind: 'meta_skill',
            prevSkill: args.prevSkill,
            currSkill: args.currSkill,
            previous: args.previous,
            pairs: args.pairs,
          },
  });
  const content = String((reply as Record<string, unknown> | undefined)?.[k.field] ?? '').trim();
  if (!reply || !content) return undefined;
  return { reasoning: String(reply.reasoning ?? '').trim(), content };
}
