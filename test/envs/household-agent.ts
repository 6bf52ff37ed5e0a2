/**
 * A deterministic stand-in for both models of an ALFWorld training run on the scripted
 * household, answering OpenAI Chat Completions request bodies:
 * - the target knows each game's layout (found by the task in its prompt) and plays a fixed
 *   plan, the step read from the prompt ("You have taken N step(s)"; none at step 0). Without
 *   the skill's rule on closed receptacles it never opens one, and without its rule on
 *   appliances it puts the object away unchanged; once its plan is done it looks around;
 * - the optimizer (requests that ask for a JSON schema) proposes the rules the skill shown to it
 *   lacks, and answers the other optimizer calls plainly.
 */
import type { Game } from '../helpers/alfworld-games.ts';
import { skillInPrompt } from '../helpers/fake-skillopt-responder.ts';

export const RULES = {
  open: 'Open every closed receptacle you go to before deciding that what you look for is not there.',
  change: 'Heat, cool or clean the object with the microwave, fridge or sink basin before you put it in its place.',
};
const KNOWS = { open: /open every closed receptacle/i, change: /heat, cool or clean the object/i };
const APPLIANCE = { heat: 'microwave', cool: 'fridge', clean: 'sinkbasin' } as const;

const kindOf = (name: string) => name.replace(/ \d+$/, '');

/** The actions the target plays in a game, given which rules it knows. */
export function plan(game: Game, knows: { open: boolean; change: boolean }): string[] {
  const { goal, receptacles } = game;
  const target = receptacles.find((r) => kindOf(r.name) === goal.target)?.name;
  const holders = receptacles.flatMap((r) =>
    (r.objects ?? []).filter((o) => kindOf(o) === goal.object).map((o) => ({ r, o })),
  );
  const actions: string[] = [];
  for (const { r, o } of holders.slice(0, goal.kind === 'two' ? 2 : 1)) {
    if (r.closed && !knows.open) {
      // It searches where it can see, and gives up.
      return [...actions, ...receptacles.filter((x) => !x.closed && x !== r).map((x) => `go to ${x.name}`)];
    }
    actions.push(`go to ${r.name}`);
    if (r.closed) actions.push(`open ${r.name}`);
    actions.push(`take ${o} from ${r.name}`);
    if (goal.kind === 'look') {
      const lamp = receptacles.find((x) => (x.objects ?? []).some((y) => kindOf(y) === 'desklamp'))!;
      return [...actions, `go to ${lamp.name}`, `use ${lamp.objects!.find((y) => kindOf(y) === 'desklamp')}`];
    }
    if ((goal.kind === 'heat' || goal.kind === 'cool' || goal.kind === 'clean') && knows.change) {
      const appliance = receptacles.find(
        (x) => kindOf(x.name) === APPLIANCE[goal.kind as keyof typeof APPLIANCE],
      )!.name;
      actions.push(`go to ${appliance}`, `${goal.kind} ${o} with ${appliance}`);
    }
    actions.push(`go to ${target}`, `move ${o} to ${target}`);
  }
  return actions;
}

type Body = { messages: { role: string; content: unknown }[]; response_format?: { json_schema?: { name?: string } } };
const text = (c: unknown) => (typeof c === 'string' ? c : (c as { text?: string }[]).map((p) => p.text ?? '').join(''));

/** The responder for a set of games, found by their task. */
export function householdResponder(
  games: Game[],
): (body: Body) => { text: string; usage: { input: number; output: number } } {
  return (body) => {
    const system = text(body.messages.find((m) => m.role === 'system')?.content ?? '');
    const user = text(body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
    const usage = { input: Math.ceil((system.length + user.length) / 4), output: 30 };
    const schema = body.response_format?.json_schema?.name;
    if (!schema) {
      const game = games.find((g) => user.includes(`Your task is to: ${g.task}`));
      if (!game) return { text: '<think>I do not know this place.</think><action>look</action>', usage };
      const step = Number(/You have taken (\d+) step/.exec(user)?.[1] ?? 0);
      const action = plan(game, { open: KNOWS.open.test(system), change: KNOWS.change.test(system) })[step] ?? 'look';
      return { text: `<think>Step ${step + 1} of my plan.</think>\n<action>${action}</action>`, usage };
    }
    const skill = skillInPrompt(user);
    const edits = (['open', 'change'] as const)
      .filter((k) => !KNOWS[k].test(skill))
      .map((k) => ({ op: 'append', content: `- ${RULES[k]}` }));
    const reply = (value: unknown) => ({ text: JSON.stringify(value), usage });
    if (schema.startsWith('analyst_'))
      return reply({ failure_summary: [], success_patterns: [], patch: { reasoning: 'search and appliances', edits } });
    if (schema === 'merged_patch') return reply({ reasoning: 'merged', edits });
    if (schema === 'ranking') return reply({ reasoning: 'in order', selected_indices: [0, 1, 2, 3] });
    if (schema === 'learning_rate') return reply({ learning_rate: 2, reasoning: '' });
    if (schema === 'slow_update') return reply({ reasoning: '', slow_update_content: '' });
    if (schema === 'meta_skill') return reply({ reasoning: '', meta_skill_content: '' });
    if (schema === 'appendix_notes') return reply({ appendix_notes: [] });
    if (schema === 'rewrite')
      return reply({ reasoning: '', new_skill: `${skill}\n${edits.map((e) => e.content).join('\n')}` });
    return reply({});
  };
}
