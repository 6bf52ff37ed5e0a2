/**
 * The Agent Skills rules for a skill's `name` and `description`, the two front-matter fields an
 * agent chooses a skill by: a name of 1 to 64 lower-case letters, digits and hyphens, without a
 * hyphen at either end or two in a row (and the skill's folder has the same name); a description
 * of 1 to 1,024 characters without `<` or `>`. Agents enforce them quietly: Copilot drops a skill
 * whose description is longer, Codex cuts it short. Deploy and the agent harnesses check with
 * these, so that what is trained is what an agent will load.
 */
import { parse as parseYaml } from 'yaml';

export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;

const NAME_RULE = `a skill name is 1 to ${SKILL_NAME_MAX} lower-case letters, digits and hyphens, with no hyphen at either end and never two in a row (the Agent Skills rules)`;

/** What is wrong with `name` as a skill's name, in a sentence that names it and the rule; undefined when nothing is. */
export function skillNameProblem(name: string): string | undefined {
  const what =
    name.length === 0
      ? 'is empty'
      : name.length > SKILL_NAME_MAX
        ? `has ${name.length} characters`
        : !/^[a-z0-9-]+$/.test(name)
          ? 'holds other characters than lower-case letters, digits and hyphens'
          : name.startsWith('-') || name.endsWith('-')
            ? 'starts or ends with a hyphen'
            : name.includes('--')
              ? 'has two hyphens in a row'
              : undefined;
  return what && `the skill name '${name}' ${what}: ${NAME_RULE}`;
}

/** What is wrong with `description` as a skill's description, in a sentence; undefined when nothing is. */
export function skillDescriptionProblem(description: string): string | undefined {
  if (description.trim().length === 0) return 'the skill description is empty: agents choose a skill by it';
  const length = [...description].length;
  if (length > SKILL_DESCRIPTION_MAX)
    return `the skill description has ${length.toLocaleString('en')} characters, more than the ${SKILL_DESCRIPTION_MAX.toLocaleString('en')} the Agent Skills rules allow (Copilot drops such a skill without a word, Codex cuts the description short)`;
  if (/[<>]/.test(description)) return "the skill description holds '<' or '>', which the Agent Skills rules forbid";
  return undefined;
}

/** The front-matter keys the Agent Skills rules allow in a `SKILL.md`. */
export const FRONT_MATTER_KEYS = [
  'name',
  'description',
  'license',
  'allowed-tools',
  'metadata',
  'compatibility',
] as const;
export const SKILL_COMPATIBILITY_MAX = 500;

/** A `SKILL.md`'s front matter as a mapping, or why it is not one (one sentence). */
export function frontMatterFields(skillMd: string): Record<string, unknown> | string {
  const m = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(skillMd);
  if (!m) return 'SKILL.md has no front matter: it must start with a --- block holding name and description';
  let data: unknown;
  try {
    data = parseYaml(m[1]!);
  } catch (err) {
    return `the front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`;
  }
  if (!data || typeof data !== 'object' || Array.isArray(data))
    return 'the front matter is not a mapping of keys to values';
  return data as Record<string, unknown>;
}

/** The `name` and `description` a `SKILL.md` lists itself by (each absent when it has none). */
export function skillListing(skillMd: string): { name?: string; description?: string } {
  const fields = frontMatterFields(skillMd);
  if (typeof fields === 'string') return {};
  const text = (key: string) => (typeof fields[key] === 'string' ? (fields[key] as string) : undefined);
  return {
    ...(text('name') ? { name: text('name') } : {}),
    ...(text('description') ? { description: text('description') } : {}),
  };
}

/**
 * What breaks the Agent Skills rules in a `SKILL.md`'s front matter, one sentence each (empty
 * when nothing does): a block that is missing or not YAML, a key the rules do not allow, a
 * missing or bad `name` or `description`, a `compatibility` over 500 characters.
 */
export function frontMatterProblems(skillMd: string): string[] {
  const read = frontMatterFields(skillMd);
  if (typeof read === 'string') return [read];
  const fields = read;
  const problems: string[] = [];
  const unknown = Object.keys(fields).filter((k) => !(FRONT_MATTER_KEYS as readonly string[]).includes(k));
  if (unknown.length)
    problems.push(
      `the front matter has ${unknown.map((k) => `'${k}'`).join(', ')}; the Agent Skills rules allow only ${FRONT_MATTER_KEYS.join(', ')}`,
    );
  const text = (key: string) => (typeof fields[key] === 'string' ? (fields[key] as string) : undefined);
  if (text('name') === undefined) problems.push("the front matter has no 'name' (a string)");
  else {
    const p = skillNameProblem(text('name')!);
    if (p) problems.push(p);
  }
  if (text('description') === undefined) problems.push("the front matter has no 'description' (a string)");
  else {
    const p = skillDescriptionProblem(text('description')!);
    if (p) problems.push(p);
  }
  const compatibility = fields.compatibility;
  if (
    compatibility !== undefined &&
    (typeof compatibility !== 'string' || compatibility.length > SKILL_COMPATIBILITY_MAX)
  )
    problems.push(`'compatibility' must be a string of at most ${SKILL_COMPATIBILITY_MAX} characters`);
  return problems;
}
