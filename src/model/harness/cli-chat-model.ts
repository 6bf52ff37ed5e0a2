/**
 * An agent CLI as a plain chat model, with the user's own login and no API key: one reply, no
 * tools, in an empty folder. The CLIs take one prompt, so the conversation is written out; the
 * system prompt replaces the CLI's own where the CLI allows it (Claude Code) and leads the
 * prompt otherwise. A JSON reply is asked for with the schema in the prompt; the caller's
 * `completeJson` repairs it and asks once more when it does not fit.
 */
import type { Price } from '../../config/schema.ts';
import { describedSchema } from '../providers/ai-sdk-model.ts';
import { costOf } from '../prices.ts';
import { validReply } from '../structured.ts';
import { FatalModelError, type ChatModel, type ChatRequest, type ChatResponse } from '../types.ts';
import type { CliHarness } from './cli-harness.ts';
import { conversationText, type Attachment } from './prompt.ts';
import { createWorkspace } from './workspace.ts';

export interface CliChatOptions {
  backend: string;
  model: string;
  timeoutMs?: number;
  price?: Price;
  /** Whether each call's cost is known: reported by the CLI, or from `price` (unset: unknown). */
  priced?: boolean;
}

export class CliChatModel implements ChatModel {
  readonly id: string;
  readonly priced: boolean;
  readonly settings: Record<string, unknown>;

  constructor(
    private readonly harness: CliHarness,
    private readonly o: CliChatOptions,
  ) {
    this.id = `${o.backend}:${o.model || 'default'}`;
    this.priced = o.priced ?? false;
    this.settings = { cli: harness.name };
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    const started = performance.now();
    if (req.tools?.length)
      throw new FatalModelError(
        `${this.o.backend} answers in text only; the ${req.purpose} request offers tools (${req.tools.map((t) => t.name).join(', ')}): use an API backend for this role, or ${this.o.backend.replace(/_chat$/, '')} as an agent target`,
      );
    const attachments: Attachment[] = [];
    const conversation = `${conversationText(req.messages, attachments)}${req.schema ? describedSchema(req) : ''}`;
    if (attachments.length && this.harness.name === 'claude-code')
      throw new FatalModelError(
        `${this.o.backend} cannot take images in a chat call (the ${req.purpose} request has ${attachments.length}); use the anthropic backend for this role`,
      );
    const system = req.system?.trim() ?? '';
    const apart = this.harness.takesSystemPrompt && system !== '';
    const prompt = apart || !system ? conversation : `${system}\n\n---\n\n${conversation}`;
    const workspace = createWorkspace(
      'chat',
      attachments.map((a) => ({ path: a.path, content: a.bytes })),
    );
    try {
      const out = await this.harness.runMode({
        mode: 'chat',
        workspace: workspace.dir,
        prompt,
        ...(apart ? { system } : {}),
        images: attachments.map((a) => a.path),
        ...(this.o.timeoutMs ? { timeoutMs: this.o.timeoutMs } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
      });
      const res: ChatResponse = {
        text: out.text,
        usage: out.usage,
        latencyMs: performance.now() - started,
        from: 'provider',
        costUsd: out.costUsd ?? costOf(out.usage, this.o.price),
      };
      if (req.schema) {
        const parsed = validReply(req.schema, out.text);
        if (parsed.ok) res.parsed = parsed.value;
      }
      return res;
    } finally {
      workspace.remove();
    }
  }
}
