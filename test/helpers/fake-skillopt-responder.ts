/**
 * A deterministic responder for the fake provider that plays both roles of a training run over
 * HTTP, in the simulated world (src/model/sim/world.ts):
 * - target requests (no JSON asked for) are answered by the simulated target, given the task's
 *   fact, found by the question text among the env's items;
 * - optimizer requests (a JSON schema asked for) get replies of our own design that depend only
 *   on the skill shown in the prompt: each proposes the house conventions the skill does not state
 *   yet, those that fix a kind of task on their own first, so accepted steps raise the score.
 * The answer to a request never depends on the order or timing of calls.
 */
import { SimModel } from '../../src/model/sim/backend.ts';
import { DEFAULT_TRAITS } from '../../src/model/sim/optimizer.ts';
import { CONVENTIONS } from '../../src/model/sim/rules.ts';
import type { Item } from '../../src/envs/types.ts';
import type { Recorded, Reply } from './fake-provider.ts';

/** Conventions that fix a kind of task alone come first (names, counts, percentages). */
const ORDER = [
  'lower_case',
  'no_thousands',
  'percent_symbol',
  'two_decimals',
  'unit_space',
  'currency_code',
  'date_iso',
];

const NEXT_SECTION =
  /\n\n## (Edits Budget|Suggestions Budget|Update Format|Previous Steps|Patches to merge|Two merged groups|Pool of)/;

export function skillInPrompt(user: string): string {
  const start = user.indexOf('## Current Skill\n');
  if (start < 0) return '';
  const rest = user.slice(start + '## Current Skill\n'.length);
  const end = rest.search(NEXT_SECTION);
  return end < 0 ? rest : rest.slice(0, end);
}

function textOf(content: unknown): string {
  return typeof content === 'string' ? content : (content as { text?: string }[]).map((p) => p.text ?? '').join('');
}

/** A Chat Completions request's system text, last user text and the name of the JSON schema it asks for (none: a target request). */
export function chatParts(r: Recorded): { system: string; user: string; schemaName?: string } {
  const messages = r.body.messages as { role: string; content: unknown }[];
  return {
    system: textOf(messages.find((m) => m.role === 'system')?.content ?? ''),
    user: textOf(messages.filter((m) => m.role === 'user').at(-1)?.content ?? ''),
    schemaName: r.body.response_format?.json_schema?.name,
  };
}

/** The simulated target's answer to a task (`fact`: what it knows of it), or a miss for a task it does not know. */
export async function simTargetReply(
  target: SimModel,
  system: string,
  user: string,
  task: { id: string; fact?: unknown } | undefined,
): Promise<Reply> {
  if (!task) return { text: '<answer>unknown</answer>', usage: { input: 50, output: 5 } };
  const res = await target.complete({
    purpose: 'rollout',
    system,
    messages: [{ role: 'user', content: user }],
    meta: { kind: 'sim_task', task: { id: task.id, fact: task.fact as never } },
  });
  return { text: res.text, usage: { input: res.usage.input, output: res.usage.output } };
}

export function skillRunResponder(items: Item[]): (r: Recorded) => Promise<Reply> {
  const byQuestion = new Map<string, Item>();
  for (const it of items) if (!byQuestion.has(String(it.question))) byQuestion.set(String(it.question), it);
  const target = new SimModel('fake', 0, 0, DEFAULT_TRAITS);
  return async (r) => {
    const { system, user, schemaName } = chatParts(r);
    if (!schemaName) return simTargetReply(target, system, user, byQuestion.get(user));
    const skill = skillInPrompt(user);
    const edits = ORDER.map((id) => CONVENTIONS.find((c) => c.id === id)!)
      .filter((c) => !c.recognise.test(skill))
      .map((c) => ({ op: 'append', content: c.rules[0] }));
    const usage = { input: Math.ceil(user.length / 4), output: 40 };
    const reply = (value: unknown): Reply => ({ text: JSON.stringify(value), usage });
    if (schemaName.startsWith('analyst_')) return reply({ patch: { reasoning: 'one convention at a time', edits } });
    if (schemaName === 'merged_patch') return reply({ reasoning: 'merged', edits });
    if (schemaName === 'ranking') return reply({ reasoning: 'in order', selected_indices: [0, 1, 2, 3] });
    if (schemaName === 'learning_rate') return reply({ learning_rate: 1, reasoning: '' });
    if (schemaName === 'slow_update') return reply({ reasoning: '', slow_update_content: '' });
    if (schemaName === 'meta_skill') return reply({ reasoning: '', meta_skill_content: '' });
    if (schemaName === 'appendix_notes') return reply({ appendix_notes: [] });
    if (schemaName === 'rewrite') return reply({ reasoning: '', new_skill: `${skill}\n${edits[0]?.content ?? ''}` });
    return { text: '{}', usage };
  };
}
