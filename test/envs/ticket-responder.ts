/**
 * A deterministic stand-in for both models of the support-ticket example (configs/tasks/
 * example.yaml), answering OpenAI Chat Completions request bodies:
 * - the target routes a message by keywords, checking the teams in a fixed order, so messages
 *   that touch several topics go wrong, unless the skill states which topic wins (two rules it
 *   recognises);
 * - the optimizer (requests that ask for a JSON schema) proposes whichever of those rules the
 *   skill shown to it lacks, and answers the other optimizer calls plainly.
 */
export const RULES = {
  returns:
    'When a message is about sending an item back, an exchange or the refund of a return, route it to returns first, even when it also mentions money or delivery.',
  technical:
    'When something in the app or website fails (crashes, errors, pages or codes that do not work), route it to technical first, even when it mentions the account.',
};
const RETURNS_FIRST = /sending an item back[^\n]*returns first/i;
const TECHNICAL_FIRST = /app or website fails[^\n]*technical first/i;

const KEYWORDS: Record<string, RegExp> = {
  billing: /charg|invoice|price|card|bill|promo|auto-renewal|refund/i,
  shipping: /parcel|tracking|deliver|ship|courier|package|arriv/i,
  returns: /return|exchange|send it back/i,
  account: /log ?in|logs? me|password|account|email address|profile|phone number|marketing emails/i,
  technical: /crash|error|blank|load|times out|two-factor|website|page|\bapp\b/i,
};

export function route(message: string, skill: string): string {
  let order = ['billing', 'shipping', 'account', 'returns', 'technical'];
  if (TECHNICAL_FIRST.test(skill)) order = ['technical', ...order.filter((t) => t !== 'technical')];
  if (RETURNS_FIRST.test(skill)) order = ['returns', ...order.filter((t) => t !== 'returns')];
  return order.find((team) => KEYWORDS[team]!.test(message)) ?? 'account';
}

type Body = { messages: { role: string; content: unknown }[]; response_format?: { json_schema?: { name?: string } } };
const text = (c: unknown) => (typeof c === 'string' ? c : (c as { text?: string }[]).map((p) => p.text ?? '').join(''));

function skillShown(user: string): string {
  const start = user.indexOf('## Current Skill\n');
  if (start < 0) return '';
  const rest = user.slice(start + '## Current Skill\n'.length);
  const end = rest.search(/\n## /);
  return end < 0 ? rest : rest.slice(0, end);
}

export function ticketResponder(body: Body): { text: string; usage: { input: number; output: number } } {
  const system = text(body.messages.find((m) => m.role === 'system')?.content ?? '');
  const user = text(body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  const usage = { input: Math.ceil((system.length + user.length) / 4), output: 30 };
  const schema = body.response_format?.json_schema?.name;
  if (!schema) {
    const message = /Customer message:\n([\s\S]*?)\n\nWhich team/.exec(user)?.[1] ?? user;
    return { text: `The message is about this team.\n<answer>${route(message, system)}</answer>`, usage };
  }
  const skill = skillShown(user);
  const edits = [RULES.returns, RULES.technical]
    .filter((rule) => !skill.includes(rule))
    .map((content) => ({ op: 'append', content }));
  const reply = (value: unknown) => ({ text: JSON.stringify(value), usage });
  if (schema.startsWith('analyst_'))
    return reply({ failure_summary: [], patch: { reasoning: 'which topic wins', edits: edits.slice(0, 1) } });
  if (schema === 'merged_patch') return reply({ reasoning: 'merged', edits: edits.slice(0, 1) });
  if (schema === 'ranking') return reply({ reasoning: 'in order', selected_indices: [0, 1, 2] });
  if (schema === 'learning_rate') return reply({ learning_rate: 1, reasoning: '' });
  if (schema === 'slow_update') return reply({ reasoning: '', slow_update_content: '' });
  if (schema === 'meta_skill') return reply({ reasoning: '', meta_skill_content: '' });
  if (schema === 'appendix_notes') return reply({ appendix_notes: [] });
  if (schema === 'rewrite') return reply({ reasoning: '', new_skill: `${skill}\n${edits[0]?.content ?? ''}` });
  return reply({});
}
