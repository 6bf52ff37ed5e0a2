/**
 * When a night trains one skill, the tasks that are about it come first: a task qualifies when
 * its words (intent, context, tags) meet one strong keyword of the skill (from its name and its
 * headings) or two weak ones (its most frequent words). Qualifying tasks are ranked by how well
 * they match; the others are left out. When no task qualifies, every task is kept: a skill
 * whose words say nothing about the tasks (a new, empty one) must still learn from them.
 */
import path from 'node:path';
import type { TaskRecord } from '../tasks/task.ts';

/** Words too common in skills and requests to say what one is about. */
const STOP = new Set(
  'about above after again agent agents also always answer any because been before being below between both but can cannot could does doing done each file files first from have here how into its just like make more most must need never only other over please same should skill skills some such task tasks than that the their them then there these they this those through under update use used user uses using very want were what when where which while will with without workflow would your you'.split(
    ' ',
  ),
);

/** Lower-case word tokens (with `.` and `-` inside), their parts, minus short, numeric and stop words. */
export function keywords(text: string): string[] {
  const out: string[] = [];
  for (const token of text.toLowerCase().match(/[\p{L}\p{N}_][\p{L}\p{N}_.-]*/gu) ?? []) {
    const clean = token.replace(/[.-]+$/, '');
    for (const w of new Set([clean, ...clean.split(/[^\p{L}\p{N}]+/u)])) {
      if (w.length >= 3 && !/^\d+$/.test(w) && !STOP.has(w)) out.push(w);
    }
  }
  return out;
}

/** Strong keywords: the skill's name (its folder) and headings; weak: those and its 180 most frequent words. */
export function skillKeywords(skillText: string, skillPath: string): { strong: Set<string>; weak: Set<string> } {
  const headings = skillText.split('\n').filter((l) => /^\s{0,3}#{1,6}\s/.test(l));
  const name = path.basename(path.dirname(path.resolve(skillPath)));
  const strong = new Set([...keywords(name), ...keywords(headings.join(' '))]);
  const counts = new Map<string, number>();
  for (const w of keywords(skillText)) counts.set(w, (counts.get(w) ?? 0) + 1);
  const frequent = [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 180)
    .map(([w]) => w);
  return { strong, weak: new Set([...strong, ...frequent]) };
}

export function filterTasksForSkill(tasks: TaskRecord[], skillText: string, skillPath: string): TaskRecord[] {
  const { strong, weak } = skillKeywords(skillText, skillPath);
  const scored = tasks.map((task, index) => {
    const words = new Set(keywords(`${task.intent} ${task.context_excerpt} ${task.tags.join(' ')}`));
    const s = [...words].filter((w) => strong.has(w)).length;
    const w = [...words].filter((x) => weak.has(x)).length;
    return { task, index, qualifies: s >= 1 || w >= 2, score: 3 * s + w };
  });
  const kept = scored.filter((x) => x.qualifies);
  if (kept.length === 0) return tasks;
  return kept.sort((a, b) => b.score - a.score || a.index - b.index).map((x) => x.task);
}
