/**
 * Skill-aware reflection: reminders of rules the target did not follow (execution lapses) go to
 * the skill's protected appendix, bypassing the gate; past a threshold, the optimizer compacts
 * them. The current score is not re-measured for this change.
 */
import path from 'node:path';
import { appendToAppendix, extractAppendixNotes, replaceAppendix } from '../../skill/regions.ts';
import { ask, type OptimizerContext } from './ask.ts';
import type { RunContext } from '../context.ts';
import type { SkillStates } from '../stages/gate.ts';
import { loadPrompt } from '../../prompt-files.ts';
import { ConsolidateReplySchema } from '../../protocol/optimizer.ts';

export async function consolidateNotes(opt: OptimizerContext, notes: string[]): Promise<string[]> {
  const reply = await ask(opt, {
    purpose: 'appendix_consolidate',
    system: loadPrompt('appendix_consolidate'),
    user: `## Reminders (${notes.length})\n${notes.map((n, i) => `${i + 1}. ${n}`).join('\n')}`,
    schema: ConsolidateReplySchema,
    schemaName: 'appendix_notes',
    meta: { kind: 'appendix_consolidate', notes },
    maxTokens: 4096,
  });
  const out = (reply?.appendix_notes ?? []).map((n) => n.trim()).filter(Boolean);
  return out.length > 0 && out.length <= notes.length ? out : notes;
}

/** Adds this step's notes to the current skill's appendix; returns the fields for the step record. */
export function flushAppendixNotes(
  ctx: Pick<RunContext, 'dir' | 'events'>,
  state: Pick<SkillStates, 'current'>,
  notes: string[],
  stepDir: string,
): Record<string, number> {
  if (notes.length === 0) return {};
  const before = extractAppendixNotes(state.current.skill).length;
  state.current = { ...state.current, skill: appendToAppendix(state.current.skill, notes) };
  const total = extractAppendixNotes(state.current.skill).length;
  ctx.dir.writeJson(path.join(stepDir, 'appendix_notes.json'), {
    step_notes: notes,
    appendix_after: extractAppendixNotes(state.current.skill),
  });
  ctx.events.info(
    `[skill-aware] +${total - before} appendix note(s) (total ${total}) from ${notes.length} lapse signal(s)`,
  );
  return {
    n_execution_lapse_notes: notes.length,
    n_appendix_notes_added: total - before,
    n_appendix_notes_total: total,
  };
}

/** Compacts the appendix when it is over the configured threshold (an optimizer call). */
export async function maybeConsolidate(
  opt: OptimizerContext,
  threshold: number,
  state: Pick<SkillStates, 'current'>,
): Promise<Record<string, number>> {
  const notes = extractAppendixNotes(state.current.skill);
  if (threshold <= 0 || notes.length <= threshold) return {};
  const compact = await consolidateNotes(opt, notes);
  if (compact.length >= notes.length) return {};
  state.current = { ...state.current, skill: replaceAppendix(state.current.skill, compact) };
  return { n_appendix_notes_consolidated: notes.length - compact.length, n_appendix_notes_total: compact.length };
}
