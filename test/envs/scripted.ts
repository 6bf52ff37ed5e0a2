/** A small in-process `ChatModel` whose replies a test scripts; it keeps every request. */
import type { AgentTrace } from '../../src/model/harness/trace.ts';
import type { ChatModel, ChatRequest, ChatResponse, ToolCall } from '../../src/model/types.ts';

export type Reply = string | { text?: string; toolCalls?: ToolCall[]; trace?: AgentTrace } | Error;

export class ScriptedModel implements ChatModel {
  readonly requests: ChatRequest[] = [];

  constructor(
    readonly id: string,
    private readonly respond: (req: ChatRequest, n: number) => Reply | Promise<Reply>,
  ) {}

  async complete(req: ChatRequest): Promise<ChatResponse> {
    this.requests.push(req);
    const reply = await this.respond(req, this.requests.length - 1);
    if (reply instanceof Error) throw reply;
    const r = typeof reply === 'string' ? { text: reply } : reply;
    return {
      text: r.text ?? '',
      toolCalls: r.toolCalls,
      usage: { input: 10, output: 5, cached: 0, reasoning: 0 },
      latencyMs: 1,
      ...('trace' in r && r.trace ? { trace: r.trace } : {}),
    };
  }
}

/** The same, as an agent target (`agentic`: it runs its own tools in a workspace). */
export class ScriptedAgent extends ScriptedModel {
  readonly agentic = true;
}

/** The text of the last user message of a request. */
export function lastUserText(req: ChatRequest): string {
  const users = req.messages.filter((m) => m.role === 'user');
  const last = users.at(-1);
  if (!last) return '';
  return typeof last.content === 'string'
    ? last.content
    : last.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}
