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

/** What is wrong with `whenToUse` beside `description` (Claude Code lists them as one entry); undefined when nothing is. */
export function whenToUseProblem(whenToUse: string, description: string): string | undefined {
  if (/[<>]/.test(whenToUse)) return "'when_to_use' holds '<' or '>', which the description may not hold either";
  const length = [...listedText({ description, whenToUse })].length;
  if (length > CLAUDE_LISTING_MAX)
    return `the description and 'when_to_use' make a listing of ${length.toLocaleString('en')} characters; Claude Code cuts a skill's listing at ${CLAUDE_LISTING_MAX.toLocaleString('en')}`;
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

/**
 * Keys Claude Code reads beyond the Agent Skills rules (its skills documentation); other agents
 * ignore them. `when_to_use` is listed after the description, so it decides loading too.
 */
export const CLAUDE_CODE_KEYS = [
  'when_to_use',
  'argument-hint',
  'disable-model-invocation',
  'user-invocable',
  'model',
  'effort',
  'context',
  'agent',
  'hooks',
  'paths',
  'shell',
] as const;

/**
 * The longest entry Claude Code lists for a skill (`description - when_to_use`), in characters
 * (2.1.x); a longer one is cut there.
 */
export const CLAUDE_LISTING_MAX = 1536;
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

/** What an agent gets when it loads the skill: `SKILL.md` after its front matter. */
export function skillBody(skillMd: string): string {
  const m = /^---\r?\n[\s\S]*?\r?\n---(?:\r?\n|$)/.exec(skillMd);
  return (m ? skillMd.slice(m[0].length) : skillMd).trim();
}

export interface SkillListed {
  name?: string;
  description?: string;
  /** Claude Code's `when_to_use`, which it lists after the description. */
  whenToUse?: string;
}

/** The `name`, `description` and `when_to_use` a `SKILL.md` lists itself by (each absent when it has none). */
export function skillListing(skillMd: string): SkillListed {
  const fields = frontMatterFields(skillMd);
  if (typeof fields === 'string') return {};
  const text = (key: string) => (typeof fields[key] === 'string' ? (fields[key] as string) : undefined);
  return {
    ...(text('name') ? { name: text('name') } : {}),
    ...(text('description') ? { description: text('description') } : {}),
    ...(text('when_to_use') ? { whenToUse: text('when_to_use') } : {}),
  };
}

/**
 * The text an agent lists a skill by: its description, and with `whenToUse` (Claude Code, which
 * reads the key) `description - when_to_use`, as Claude Code joins them.
 */
export function listedText(skill: SkillListed, whenToUse = true): string {
  const description = skill.description ?? '';
  return whenToUse && skill.whenToUse ? `${description} - ${skill.whenToUse}` : description;
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
  const known: readonly string[] = [...FRONT_MATTER_KEYS, ...CLAUDE_CODE_KEYS];
  const unknown = Object.keys(fields).filter((k) => !known.includes(k));
  if (unknown.length)
    problems.push(
      `the front matter has ${unknown.map((k) => `'${k}'`).join(', ')}; the Agent Skills rules allow only ${FRONT_MATTER_KEYS.join(', ')} (and Claude Code reads ${CLAUDE_CODE_KEYS.join(', ')})`,
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
  const whenToUse = fields.when_to_use;
  if (whenToUse !== undefined) {
    const p =
      typeof whenToUse === 'string'
        ? whenToUseProblem(whenToUse, text('description') ?? '')
        : "'when_to_use' must be a string";
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
