/**
 * What the question-answering envs share: ask the target (with a second chance when its reply
 * has no answer in the required form, up to `max_turns` turns), extract the answer, score it,
 * and turn all of it into a `Trajectory` the optimizer can read. An agent target (Codex, Claude
 * Code, …) gets the skill apart, to install where it reads skills, and the task's documents as
 * files in its workspace; what it did comes back as traces.
 */
import type { AgentTrace } from '../model/harness/trace.ts';
import {
  addUsage,
  type ChatResponse,
  type ImagePart,
  type Message,
  type TextPart,
  type Usage,
  type WorkspaceFile,
} from '../model/types.ts';
import { extractAnswer, type ExtractRule, type Extracted } from './scoring/extract.ts';
import type { Score } from './scoring/types.ts';
import type { ConversationEntry, Item, RolloutContext, Trajectory } from './types.ts';

export { addUsage };

export interface AskOptions {
  system: string;
  /** The skill as it appears in `system` (an agent target installs it as a file instead). */
  skill: string;
  /** The task's documents, for an agent target's workspace (chat models get them in the prompt or through tools). */
  workspaceFiles?: WorkspaceFile[];
  /** The first user message: text, or text and images. */
  user: string | (TextPart | ImagePart)[];
  rule: ExtractRule;
  /** Turns at most; a later turn happens only when the reply had no answer in the required form. */
  maxTurns: number;
  /** What to say when the reply had no answer in the required form. */
  retryMessage: string;
  maxOutputTokens?: number;
}

export interface Asked {
  reply: string;
  extracted: Extracted;
  turns: number;
  usage: Usage;
  messages: Message[];
  /** An agent target's trace of each call. */
  traces: AgentTrace[];
}

export async function askForAnswer(opts: AskOptions, ctx: RolloutContext): Promise<Asked> {
  const messages: Message[] = [{ role: 'user', content: opts.user }];
  let usage: Usage = { input: 0, output: 0, cached: 0, reasoning: 0 };
  let res: ChatResponse | undefined;
  let extracted: Extracted = { answer: '', found: false };
  let turns = 0;
  const traces: AgentTrace[] = [];
  const files = ctx.target.agentic && opts.workspaceFiles?.length ? { workspaceFiles: opts.workspaceFiles } : {};
  while (turns < Math.max(1, opts.maxTurns)) {
    turns++;
    res = await ctx.target.complete({
      purpose: 'rollout',
      system: opts.system,
      skill: opts.skill,
      ...files,
      messages: [...messages],
      maxOutputTokens: opts.maxOutputTokens,
      sample: ctx.sample,
      signal: ctx.signal,
    });
    usage = addUsage(usage, res.usage);
    if (res.trace) traces.push(res.trace);
    messages.push({ role: 'assistant', content: res.text });
    extracted = extractAnswer(res.text, opts.rule);
    if (extracted.found || turns >= opts.maxTurns) break;
    messages.push({ role: 'user', content: opts.retryMessage });
  }
  return { reply: res?.text ?? '', extracted, turns, usage, messages, traces };
}

/** The user message as a line of the trajectory (images named, not inlined). */
export function describeUser(content: string | (TextPart | ImagePart)[]): string {
  if (typeof content === 'string') return content;
  return content
    .map((p) =>
      p.type === 'text'
        ? p.text
        : `[image] ${p.image.startsWith('data:') ? '(inline image)' : p.image.split('/').at(-1)}`,
    )
    .join('\n');
}

/** The target's last reply in a finished rollout, as its conversation recorded it ('' when none). */
export function replyOf(t: Trajectory): string {
  const said = t.conversation?.findLast((m) => 'role' in m && m.role === 'assistant');
  return said && 'content' in said ? String(said.content) : '';
}

export function conversationOf(messages: Message[]): ConversationEntry[] {
  return messages.map((m) => {
    if (m.role === 'user') return { role: 'user', content: describeUser(m.content) };
    if (m.role === 'tool') return { role: 'tool', content: m.content };
    return { role: 'assistant', content: m.content };
  });
}

const quote = (s: string, max = 300) => (s.length > max ? `${s.slice(0, max)}…` : s);

export interface TrajectoryParts {
  item: Item;
  task: string;
  system: string;
  user: string;
  asked: Pick<Asked, 'reply' | 'extracted' | 'usage'> & Partial<Pick<Asked, 'traces'>>;
  conversation: ConversationEntry[];
  score: Score;
  /** The expected answer as shown to the optimizer. */
  expected: unknown;
  /** Extra lines for the evaluation note. */
  notes?: string[];
}

/** A scored trajectory, with the reference's failure reason ("EM=0: predicted '…' but expected …"). */
export function scoredTrajectory(p: TrajectoryParts): Trajectory {
  const { score, asked } = p;
  const predicted = asked.extracted.answer;
  const expectedText =
    p.expected === undefined || p.expected === null
      ? '(no reference answer)'
      : typeof p.expected === 'string'
        ? `'${quote(p.expected)}'`
        : quote(JSON.stringify(p.expected));
  const formatNote = asked.extracted.found
    ? undefined
    : `the reply gave no answer in the required form${predicted ? `; '${quote(predicted, 80)}' was taken as the answer by the fallback rule` : ''}`;
  const failReason =
    score.hard >= 1
      ? undefined
      : `${score.metric}=${+score.hard.toFixed(4)}: predicted '${quote(predicted)}' but expected ${expectedText}`;
  const feedback = [formatNote, score.feedback, ...(p.notes ?? [])].filter(Boolean).join('\n') || undefined;
  const evaluation = [
    '[EVALUATION RESULT]',
    `predicted: ${quote(predicted)}`,
    `expected: ${expectedText}`,
    `${score.metric}: ${+score.hard.toFixed(4)} (hard), ${+score.soft.toFixed(4)} (soft)`,
    ...(feedback ? [feedback] : []),
  ].join('\n');
  return {
    id: p.item.id,
    hard: score.hard,
    soft: score.soft,
    taskType: p.item.type ?? 'other',
    task: p.task,
    predicted,
    expected: p.expected,
    ...(failReason ? { failReason } : {}),
    ...(feedback ? { feedback } : {}),
    conversation: [...p.conversation, { role: 'system', content: evaluation }],
    systemPrompt: p.system,
    userPrompt: p.user,
    usage: asked.usage,
    ...(asked.traces?.length ? { traces: asked.traces } : {}),
  };
}
