/**
 * The simulated optimizer's edits for rules missing from a single-document skill: a rule in the
 * body, or in place of a line too vague for the target. A simulation: see `world.ts`.
 */
import type { Edit } from '../../skill/edits.ts';
import { stripProtectedRegions } from '../../skill/regions.ts';
import type { Rng } from '../../util/random.ts';
import { CONVENTIONS } from './rules.ts';
import { conventionOf } from './world.ts';

/** The body of the skill, without protected regions (edits may not target those). */
const body = stripProtectedRegions;

/** The first line of the skill's body that `pattern` matches. */
export function lineMatching(skill: string, pattern: RegExp): string | undefined {
  return body(skill)
    .split('\n')
    .find((line) => pattern.test(line));
}

/** Rules the failures show missing, added to a single document: in its body, or in place of a vague line. */
export function documentRuleEdits(
  skill: string,
  missing: Map<string, number>,
  rng: Rng,
  vague: number,
  fresh: (options: string[]) => string[],
) {
  const edits: Edit[] = [];
  const summary: { failure_type: string; count: number; description: string }[] = [];
  const bodyText = body(skill);
  for (const [id, count] of [...missing].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) {
    const convention = CONVENTIONS.find((c) => c.id === id)!;
    const vagueLine = convention.vague
      .map((v) => lineMatching(skill, new RegExp(v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))))
      .find(Boolean);
    const choices = fresh(convention.rules);
    const wording = rng.chance(vague)
      ? rng.pick(convention.vague)
      : rng.pick(choices.length ? choices : convention.rules);
    if (vagueLine && conventionOf(wording))
      edits.push({ op: 'replace', target: vagueLine.replace(/^- /, ''), content: wording });
    else if (/^- /m.test(bodyText) && rng.chance(0.5)) {
      const lastBullet = bodyText
        .split('\n')
        .filter((l) => l.startsWith('- '))
        .at(-1)!;
      edits.push({ op: 'insert_after', target: lastBullet, content: `- ${wording}` });
    } else edits.push({ op: 'append', content: `- ${wording}` });
    summary.push({ failure_type: 'rule_missing', count, description: `answers miss the ${id} convention` });
  }
  return { edits, summary };
}
