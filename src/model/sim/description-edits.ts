/**
 * The simulated optimizer's description edits, for a step that trains the description: the
 * words of the requests the skill missed join a "Use when the user asks about" list, and the
 * words it shares with requests it loaded for wrongly leave it (unless a missed request has them
 * too); a claim to everything is dropped. Two analysts' descriptions merge by their lists. A
 * skill that has a `when_to_use`, for a target that lists it, gets the list there instead.
 *
 * A simulation of an optimizer, made for the simulated agent's choice (`activation.ts`); it
 * says nothing about what a real model would write.
 */
import { skillListing } from '../../skill/agent-skill.ts';
import { SKILL_DESCRIPTION_MAX } from '../../skill/agent-skill.ts';
import type { Edit } from '../../skill/edit-schema.ts';
import { DESCRIPTION_OP } from '../../skill/description.ts';
import type { OptimizerMeta, TrajectoryView } from '../../protocol/optimizer.ts';
import { contentWords, stems } from './activation.ts';

const LIST = ' Use when the user asks about: ';
const BROAD_SENTENCE = /[^.]*\b(?:any|anything|everything|whatever|all kinds)\b[^.]*\.?/gi;

/** A description as its base sentence and its list of request words. */
function parts(description: string): { base: string; words: string[] } {
  const at = description.indexOf(LIST.trim());
  if (at < 0) return { base: description.trim(), words: [] };
  const list = description.slice(at + LIST.trim().length).replace(/\.$/, '');
  return {
    base: description.slice(0, at).trim(),
    words: list
      .split(',')
      .map((w) => w.trim())
      .filter(Boolean),
  };
}

function render(base: string, words: string[]): string {
  const text = words.length ? `${base}${LIST}${words.join(', ')}.` : base;
  return text.length <= SKILL_DESCRIPTION_MAX ? text : text.slice(0, SKILL_DESCRIPTION_MAX);
}

/**
 * One `set_description` from a failure minibatch, or none when nothing in it concerns loading.
 * With `whenToUse` (the target lists it) and a skill that has one, its `when_to_use` is what changes.
 */
export function descriptionEdit(skill: string, trajectories: TrajectoryView[], whenToUse = false): Edit[] {
  const listing = skillListing(skill);
  const inWhen = whenToUse && listing.whenToUse !== undefined;
  const current = (inWhen ? listing.whenToUse : listing.description) ?? '';
  const missed = trajectories.filter((t) => t.failReason.startsWith('missed'));
  const wrong = trajectories.filter((t) => t.failReason.startsWith('false trigger'));
  if (!missed.length && !wrong.length) return [];
  let { base, words: list } = parts(current);
  base = base.replace(BROAD_SENTENCE, '').trim() || base;
  const count = new Map<string, number>();
  for (const t of missed) for (const w of contentWords(t.task)) count.set(w, (count.get(w) ?? 0) + 1);
  const needed = new Set([...count.keys()].map((w) => [...stems(w)][0]!));
  const spoiling = new Set<string>();
  for (const t of wrong) for (const s of stems(t.task)) if (!needed.has(s)) spoiling.add(s);
  const keep = (w: string) => !spoiling.has([...stems(w)][0] ?? '');
  list = list.filter(keep);
  base = base
    .split(/\s+/)
    .filter((w) => keep(w.replace(/[^a-z]/gi, '').toLowerCase()) || !/[a-z]{4,}/i.test(w))
    .join(' ');
  const added = [...count]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([w]) => w)
    .filter((w) => keep(w) && !list.includes(w))
    .slice(0, 6);
  const next = render(base, [...list, ...added]);
  if (next === current) return [];
  return [
    inWhen
      ? { op: DESCRIPTION_OP, content: listing.description ?? '', when_to_use: next }
      : { op: DESCRIPTION_OP, content: next },
  ];
}

/** Two proposed descriptions as one: the first's base, both lists. */
export function unionDescriptions(a: string, b: string): string {
  const pa = parts(a);
  const pb = parts(b);
  return render(pa.base, [...pa.words, ...pb.words.filter((w) => !pa.words.includes(w))]);
}

/** A description step's analyst: one description from the minibatch's loading failures. */
export function descriptionAnalyst(meta: Extract<OptimizerMeta, { kind: 'analyst' }>): unknown {
  const edits =
    meta.source === 'failure'
      ? descriptionEdit(meta.skill, meta.trajectories, meta.whenToUse).slice(0, meta.budget)
      : [];
  return {
    batch_size: meta.trajectories.length,
    ...(meta.source === 'failure'
      ? {
          failure_summary: [
            {
              failure_type: 'activation',
              count: meta.trajectories.length,
              description: 'the skill loaded when it should not, or not when it should',
            },
          ],
        }
      : { success_patterns: ['the description fit these requests'] }),
    patch: { reasoning: edits.length ? 'a description that names the requests it serves' : 'nothing to change', edits },
    ...(meta.skillAware ? { appendix_notes: [] } : {}),
  };
}
