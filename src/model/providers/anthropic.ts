/**
 * `anthropic`: the Anthropic Messages API. The system prompt goes in the top-level `system`
 * field, `max_tokens` is always sent (the API requires it), and extended thinking is on when
 * `options.thinking_budget` is set and the model has it. (The original's `claude_chat` is the Claude Code CLI, not this API.)
 */
import { z } from 'zod';
import { capabilitiesOf } from '../capabilities.ts';
import { priceOf } from '../prices.ts';
import { registerBackend } from '../registry.ts';
import { AiSdkChatModel } from './ai-sdk-model.ts';
import { anthropicSystemCache } from './prompt-cache.ts';
import { replyCapFetch } from './reply-cap.ts';
import { apiKey, baseUrl, droppedOptionNotice, parseOptions } from './settings.ts';

export const AnthropicOptionsSchema = z
  .object({
    /** Extended thinking budget in tokens (0 = off; the API's minimum is 1024). */
    thinking_budget: z.number().int().nonnegative().default(0),
    /** `max_tokens` when neither the call nor `max_output_tokens` sets one. */
    default_max_tokens: z.number().int().positive().default(8192),
  })
  .strict()
  .refine((o) => o.thinking_budget === 0 || o.thinking_budget >= 1024, {
    message: 'thinking_budget must be 0 (off) or at least 1024',
    path: ['thinking_budget'],
  });

registerBackend({
  name: 'anthropic',
  aliases: ['anthropic_chat', 'anthropic_api'],
  defaultModel: 'claude-sonnet-4-5',
  optionsSchema: AnthropicOptionsSchema as unknown as z.ZodObject,
  create(rc, ctx) {
    const o = parseOptions(AnthropicOptionsSchema, rc, ctx, 'anthropic');
    const endpoint = baseUrl(rc, ctx, ['ANTHROPIC_BASE_URL'], 'https://api.anthropic.com/v1', 'Anthropic');
    const key = apiKey(rc, ctx, ['ANTHROPIC_API_KEY'], true, 'Anthropic');
    // Extended thinking only for the models that have it (capabilities.ts); said once when left out.
    let thinking = o.thinking_budget > 0;
    if (thinking && !capabilitiesOf(rc.model, rc.capabilities).thinking) {
      droppedOptionNotice(rc, ctx)('thinking', String(o.thinking_budget));
      thinking = false;
    }
    return new AiSdkChatModel({
      backend: 'anthropic',
      model: rc.model,
      // With extended thinking each tool round would have to send its thinking blocks back, which our messages do not keep.
      ...(thinking ? {} : { skillFiles: rc.skill_files }),
      batchable: true,
      sdk: async () =>
        (await import('@ai-sdk/anthropic'))
          .createAnthropic({
            baseURL: endpoint,
            apiKey: key,
            fetch: replyCapFetch(ctx.role, rc.max_reply_bytes, ctx.fetch),
          })
          .messages(rc.model),
      endpoint,
      url: endpoint,
      price: priceOf(rc.model, rc.price),
      maxOutputTokens: rc.max_output_tokens,
      temperature: rc.temperature,
      shape: (req, base) => ({
        ...(thinking
          ? { providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: o.thinking_budget } } } }
          : {}),
        // Anthropic's structured output forces a tool call, which extended thinking does not allow.
        nativeSchema: rc.json_schema && !thinking,
        ...(rc.prompt_cache ? { systemOptions: anthropicSystemCache(req, rc.model) } : {}),
        maxOutputTokens: base.maxOutputTokens ?? o.default_max_tokens,
        // Thinking requires the default temperature.
        ...(base.temperature !== undefined && !thinking ? { temperature: base.temperature } : {}),
      }),
    });
  },
});
