/**
 * The description as an edit: `set_description` replaces the `description` of `SKILL.md`'s front
 * matter, and nothing else of it, within the Agent Skills rules (at most 1,024 characters, no
 * angle brackets). The rest of the front matter keeps its text, comments and order; the body is
 * not touched. An agent chooses a skill by this one field, so it is trained on its own.
 */
import { isMap, isScalar, parseDocument } from 'yaml';
import { skillDescriptionProblem } from './agent-skill.ts';

/** The op that replaces the description. */
export const DESCRIPTION_OP = 'set_description';

/** Whether a proposed change is a description edit (`set_description`). */
export function isDescriptionEdit(item: unknown): boolean {
  return Boolean(item && typeof item === 'object' && (item as { op?: unknown }).op === DESCRIPTION_OP);
}

const FRONT = /^(---\r?\n)([\s\S]*?\r?\n)(---(?:\r?\n|$))/;

/** `skillMd` with its description set to `description`, or why it cannot be. */
export function withDescription(skillMd: string, description: string): { text: string } | { problem: string } {
  const text = description.replace(/\s+/g, ' ').trim();
  const problem = skillDescriptionProblem(text);
  if (problem) return { problem };
  const m = FRONT.exec(skillMd);
  if (!m) return { problem: 'the skill has no front matter to hold a description' };
  const doc = parseDocument(m[2]!);
  if (doc.errors.length || !isMap(doc.contents))
    return { problem: 'the front matter is not a YAML mapping: its description cannot be set' };
  const node = doc.get('description', true);
  if (node !== undefined && !isScalar(node)) return { problem: 'the description in the front matter is not a string' };
  doc.set('description', text);
  const front = doc.toString({ lineWidth: 0 });
  return { text: `${m[1]}${front}${m[3]}${skillMd.slice(m[0].length)}` };
}
