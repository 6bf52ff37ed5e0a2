/**
 * The simulator's side of SkillOpt-Sleep, so that a whole night runs offline. Sessions in the
 * simulated world are questions about the fictional sites of `world.ts`, answered by an agent in
 * its own formats and corrected by the developer ("no: 2019-03-05"):
 *
 * - as the miner it turns each question followed by a correction into a task whose check is the
 *   corrected answer (`contains`);
 * - as the target it knows every fact (the one the task's reference states) and formats it by
 *   the conventions the documents state, as the sim env's target does;
 * - as the judge of a rubric it scores the share of the rubric's words the answer holds.
 *
 * The optimizer's analyst, merge and ranking requests are the trainer's own, answered by
 * `optimizer.ts`, which reads the formatting convention a wrong answer missed.
 */
import type { SleepAttemptMeta, SleepJudgeMeta, SleepMeta, SleepMineMeta } from '../../protocol/sleep.ts';
import { answer, type Fact } from './world.ts';

/** Answers written in the house conventions, as the developer writes corrections. */
const CANONICAL: { pattern: RegExp; fact: (m: RegExpExecArray) => Fact }[] = [
  {
    pattern: /\b(\d{4})-(\d{2})-(\d{2})\b/,
    fact: (m) => ({ kind: 'date', y: Number(m[1]), m: Number(m[2]), d: Number(m[3]) }),
  },
  { pattern: /\b(\d+\.\d{2}) USD\b/, fact: (m) => ({ kind: 'money', amount: Number(m[1]) }) },
  { pattern: /\b(\d+\.\d{2}) (kg|km|L|m)\b/, fact: (m) => ({ kind: 'measurement', value: Number(m[1]), unit: m[2]! }) },
  { pattern: /(?<![\d.])(\d+(?:\.\d+)?)%/, fact: (m) => ({ kind: 'percent', p: Number(m[1]) }) },
];

/** The fact a text states in the house conventions, with the text of that answer. */
export function canonicalAnswer(text: string): { fact: Fact; text: string } | undefined {
  for (const c of CANONICAL) {
    const m = c.pattern.exec(text);
    if (m) return { fact: c.fact(m), text: m[0] };
  }
  return undefined;
}

function mine(meta: SleepMineMeta): unknown {
  const tasks: unknown[] = [];
  meta.prompts.forEach((prompt, i) => {
    if (tasks.length >= meta.maxTasks || !prompt.trim().endsWith('?')) return;
    for (const later of meta.prompts.slice(i + 1)) {
      if (later.trim().endsWith('?')) break;
      const corrected = canonicalAnswer(later);
      if (corrected) {
        tasks.push({
          intent: prompt.trim(),
          rubric: null,
          checks: [{ op: 'contains', arg: corrected.text }],
          satisfied: false,
        });
        break;
      }
    }
  });
  return { tasks };
}

function attempt(meta: SleepAttemptMeta, system: string, tokens: () => number, sample: number): string {
  const t = meta.task;
  const references = [t.reference, ...t.checks.filter((c) => c.op === 'contains').map((c) => String(c.arg ?? ''))];
  const known = references.map(canonicalAnswer).find(Boolean);
  if (!known) return `Done: ${t.intent.slice(0, 80)}`;
  return answer({ id: t.id, fact: known.fact }, system, { tokens, skillKey: system, sample });
}

function judge(meta: SleepJudgeMeta): unknown {
  const words = [...new Set(meta.rubric.toLowerCase().match(/[a-z0-9]{3,}/g) ?? [])];
  const said = meta.response.toLowerCase();
  const score = words.length ? words.filter((w) => said.includes(w)).length / words.length : 0;
  return { score: Math.round(score * 100) / 100, reason: `${Math.round(score * 100)}% of the rubric's words` };
}

/** The simulator's reply to a Sleep request, as text. */
export function sleepReply(meta: SleepMeta, req: { system: string; tokens: () => number; sample: number }): string {
  switch (meta.kind) {
    case 'sleep_mine':
      return JSON.stringify(mine(meta));
    case 'sleep_attempt':
      return attempt(meta, req.system, req.tokens, req.sample);
    case 'sleep_judge':
      return JSON.stringify(judge(meta));
  }
}
