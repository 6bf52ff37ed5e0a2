/**
 * The description a deployed skill gets when neither the user nor the skill gives one: made from
 * the run, so that an agent can tell when to load it. What the skill is comes from its own text
 * (its title and its first sentence); when to use it, from the tasks it was trained on (the
 * shortest task the run recorded, and the task types).
 */
import fs from 'node:fs';
import path from 'node:path';
import { jsonLines } from '../run/atomic.ts';
import { frontMatter } from '../skill/regions.ts';
import { SKILL_DESCRIPTION_MAX } from '../skill/agent-skill.ts';

/** Where a run keeps scored rollouts, the evaluations first (they cover the held-out tasks). */
const RESULTS = ['test_eval', 'final_selection_eval', 'selection_eval_baseline', 'test_eval_baseline'];
/** Lines read per results file: a sample of the tasks is enough. */
const SAMPLE = 200;
const EXAMPLE_MAX = 160;

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
/** Agents refuse `<` and `>` in a description. */
const clean = (text: string) => text.replace(/[<>]/g, '');

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text;
}

/** The skill's title (its first `# ` heading) and the first sentence of its first paragraph. */
function whatItIs(skill: string): { title?: string; lead?: string } {
  const lines = skill.slice(frontMatter(skill).length).split(/\r?\n/);
  const title = lines
    .find((l) => /^#\s+\S/.test(l))
    ?.replace(/^#\s+/, '')
    .replace(/[.:]\s*$/, '')
    .trim();
  const prose = lines.find((l) => {
    const t = l.trim();
    return t !== '' && !/^(#|[-*+]\s|\d+[.)]\s|\||```|>|<!--)/.test(t);
  });
  // A skill of rules alone: its first rule says what it is about.
  const first = prose ?? lines.find((l) => /^\s*([-*+]|\d+[.)])\s+\S/.test(l))?.replace(/^\s*([-*+]|\d+[.)])\s+/, '');
  const lead = first ? (/^(.*?[.!?])(\s|$)/.exec(first.trim())?.[1] ?? first.trim()) : undefined;
  return { title: title || undefined, lead: lead ? clip(oneLine(lead), 300) : undefined };
}

/** The results files of a run, the evaluations first, then the steps' rollouts. */
function resultFiles(run: string): string[] {
  const files = RESULTS.map((d) => path.join(run, d, 'results.jsonl'));
  const steps = path.join(run, 'steps');
  if (fs.existsSync(steps))
    for (const step of fs.readdirSync(steps).sort()) files.push(path.join(steps, step, 'rollout', 'results.jsonl'));
  return files.filter((f) => fs.existsSync(f));
}

/** The shortest task of the first results file that has tasks, and the task types seen there. */
function tasksOf(run: string): { example?: string; types: string[] } {
  for (const file of resultFiles(run)) {
    let example: string | undefined;
    const types = new Set<string>();
    let n = 0;
    for (const { value } of jsonLines<{ task?: unknown; task_type?: unknown }>(file)) {
      if (++n > SAMPLE) break;
      const task = typeof value.task === 'string' ? oneLine(value.task) : '';
      if (task && (example === undefined || task.length < example.length)) example = task;
      if (typeof value.task_type === 'string' && value.task_type && value.task_type !== 'other')
        types.add(value.task_type);
    }
    if (example) return { example: clip(clean(example), EXAMPLE_MAX), types: [...types].sort() };
  }
  return { types: [] };
}

/** The first letter lower-cased, unless the word is an acronym or a name in capitals. */
const lowerFirst = (s: string) => (/^[A-Z][a-z]/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s);

/** A description of `skill` for an agent to choose it by, from its text and the tasks of the run `run`. */
export function describeFromRun(skill: string, run: string): string {
  const { title, lead } = whatItIs(skill);
  const what =
    title && lead ? `${title}: ${lowerFirst(lead)}` : (title ?? lead ?? 'Conventions learned from scored attempts');
  const { example, types } = tasksOf(run);
  const kinds = types.length > 0 && types.length <= 8 ? ` (${types.join(', ')})` : '';
  const when = example ? `Use it for tasks like "${example}"${kinds}` : '';
  const sentence = (s: string) => (!s || /[.!?…]$/.test(s) ? s : `${s}.`);
  return clip(oneLine(clean(`${sentence(what)} ${sentence(when)}`)), SKILL_DESCRIPTION_MAX);
}
