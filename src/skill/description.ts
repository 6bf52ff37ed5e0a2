/**
 * The description as an edit: `set_description` replaces the `description` of `SKILL.md`'s front
 * matter within the Agent Skills rules (at most 1,024 characters, no angle brackets), and with a
 * `when_to_use` the key Claude Code lists after it ('' removes it; the two within Claude Code's
 * 1,536 characters a listing). The rest of the front matter keeps its text, comments and order;
 * the body is not touched. An agent chooses a skill by these fields, so they are trained on their own.
 */
import { isMap, isScalar, parseDocument } from 'yaml';
import { skillDescriptionProblem, whenToUseProblem } from './agent-skill.ts';

/** The op that replaces the description. */
export const DESCRIPTION_OP = 'set_description';

/** Whether a proposed change is a description edit (`set_description`). */
export function isDescriptionEdit(item: unknown): boolean {
  return Boolean(item && typeof item === 'object' && (item as { op?: unknown }).op === DESCRIPTION_OP);
}

const FRONT = /^(---\r?\n)([\s\S]*?\r?\n)(---(?:\r?\n|$))/;

const oneParagraph = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * `skillMd` with its description set to `description` (and its `when_to_use` to `whenToUse`
 * when given: '' removes the key), or why it cannot be.
 */
export function withDescription(
  skillMd: string,
  description: string,
  whenToUse?: string,
): { text: string } | { problem: string } {
  const text = oneParagraph(description);
  const when = whenToUse === undefined ? undefined : oneParagraph(whenToUse);
  const problem = skillDescriptionProblem(text) ?? (when ? whenToUseProblem(when, text) : undefined);
  if (problem) return { problem };
  const m = FRONT.exec(skillMd);
  if (!m) return { problem: 'the skill has no front matter to hold a description' };
  const doc = parseDocument(m[2]!);
  if (doc.errors.length || !isMap(doc.contents))
    return { problem: 'the front matter is not a YAML mapping: its description cannot be set' };
  const node = doc.get('description', true);
  if (node !== undefined && !isScalar(node)) return { problem: 'the description in the front matter is not a string' };
  doc.set('description', text);
  if (when === '') doc.delete('when_to_use');
  else if (when !== undefined) doc.set('when_to_use', when);
  else {
    const kept = doc.get('when_to_use');
    const p = typeof kept === 'string' ? whenToUseProblem(kept, text) : undefined;
    if (p) return { problem: p };
  }
  const front = doc.toString({ lineWidth: 0 });
  return { text: `${m[1]}${front}${m[3]}${skillMd.slice(m[0].length)}` };
}
