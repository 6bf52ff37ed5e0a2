import type { ChatModel, ChatRequest, ChatResponse } from '../../src/model/types.ts';

/** A model that answers with `reply(req)`: text, or an error to throw. */
export function scriptedModel(
  reply: (req: ChatRequest, n: number) => string | Error | Promise<string | Error>,
  id = 'scripted:test',
): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    id,
    requests,
    async complete(req: ChatRequest): Promise<ChatResponse> {
      requests.push(req);
      const out = await reply(req, requests.length);
      if (out instanceof Error) throw out;
      return {
        text: out,
        usage: { input: 10, output: 5, cached: 0, reasoning: 0 },
        latencyMs: 0,
        from: 'provider',
        costUsd: 0,
      };
    },
  };
}
