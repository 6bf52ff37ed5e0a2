/**
 * Chat Completions servers reached by base URL: `openai_compatible` (vLLM, SGLang, Ollama,
 * LM Studio, llama.cpp server, gateways), `qwen_chat` (the same plus Qwen's thinking switch,
 * sent as `chat_template_kwargs`) and `minimax_chat` (MiniMax's regional endpoints and its
 * `thinking` field). Reasoning effort is not sent: these servers do not share one spelling.
 */
import type { JSONObject } from '@ai-sdk/provider';
import { z } from 'zod';
import type { RoleConfig } from '../../config/schema.ts';
import { priceOf } from '../prices.ts';
import { registerBackend, type BackendContext } from '../registry.ts';
import { FatalModelError } from '../types.ts';
import { AiSdkChatModel } from './ai-sdk-model.ts';
import { replyCapFetch } from './reply-cap.ts';
import { apiKey, baseUrl, fromEnvironment, parseOptions } from './settings.ts';

const common = {
  /** Send the cap as `max_completion_tokens` instead of `max_tokens`. */
  use_max_completion_tokens: z.boolean().default(false),
  /** Extra fields merged into every request body (e.g. vLLM's `top_k`, `repetition_penalty`). */
  extra_body: z.record(z.string(), z.unknown()).default({}),
};

export const CompatibleOptionsSchema = z.object({ ...common }).strict();
export const QwenOptionsSchema = z
  .object({
    ...common,
    /** server_default sends nothing (the server's chat template decides); enabled/disabled send chat_template_kwargs.enable_thinking. */
    thinking_mode: z.enum(['server_default', 'enabled', 'disabled']).default('server_default'),
  })
  .strict();
export const MiniMaxOptionsSchema = z
  .object({
    ...common,
    /** global_en: api.minimax.io; cn_zh: api.minimaxi.com. An explicit base_url or MINIMAX_BASE_URL wins. */
    region: z.string().default(''),
    /** Ask for thinking (MiniMax-M2 models always think). */
    enable_thinking: z.boolean().default(false),
  })
  .strict();

const MINIMAX_REGIONS: Record<string, string> = {
  global_en: 'https://api.minimax.io/v1',
  cn_zh: 'https://api.minimaxi.com/v1',
};

interface Flavour {
  backend: string;
  baseUrl: string;
  key: string | undefined;
  options: z.infer<typeof CompatibleOptionsSchema>;
  /** Fields of every request body beyond the standard ones. */
  body: JSONObject;
}

function build(rc: RoleConfig, ctx: BackendContext, f: Flavour) {
  const settings = {
    name: 'compat',
    baseURL: f.baseUrl,
    ...(f.key ? { apiKey: f.key } : {}),
    includeUsage: true,
    fetch: replyCapFetch(ctx.role, rc.max_reply_bytes, ctx.fetch),
    supportsStructuredOutputs: rc.json_schema,
    transformRequestBody: f.options.use_max_completion_tokens
      ? (args: Record<string, unknown>) => {
          const { max_tokens, ...rest } = args;
          return max_tokens === undefined ? rest : { ...rest, max_completion_tokens: max_tokens };
        }
      : undefined,
  };
  const extra = { ...(f.options.extra_body as JSONObject), ...f.body };
  return new AiSdkChatModel({
    backend: f.backend,
    model: rc.model,
    // vLLM and llama.cpp refuse tools unless started with a tool parser: the tool only when asked for by name.
    ...(rc.skill_files === 'tool' ? { skillFiles: 'tool' as const } : {}),
    sdk: async () => (await import('@ai-sdk/openai-compatible')).createOpenAICompatible(settings).chatModel(rc.model),
    endpoint: f.baseUrl,
    url: f.baseUrl,
    price: priceOf(rc.model, rc.price),
    maxOutputTokens: rc.max_output_tokens,
    temperature: rc.temperature,
    shape: (_req, base) => ({
      // Not strict: our reply schemas have optional fields, which strict mode refuses.
      providerOptions: { compat: { ...extra, strictJsonSchema: false } },
      nativeSchema: rc.json_schema,
      ...base,
    }),
  });
}

registerBackend({
  name: 'openai_compatible',
  aliases: [
    'openai_compatible_chat',
    'openai-compatible',
    'compat',
    'vllm',
    'sglang',
    'ollama',
    'lmstudio',
    'llamacpp',
  ],
  defaultModel: 'gpt-4o-mini',
  optionsSchema: CompatibleOptionsSchema,
  create(rc: RoleConfig, ctx: BackendContext) {
    const options = parseOptions(CompatibleOptionsSchema, rc, ctx, 'openai_compatible');
    return build(rc, ctx, {
      backend: 'openai_compatible',
      // No default: a key goes only to a server the user named (openai_chat is the backend for OpenAI itself).
      baseUrl: baseUrl(rc, ctx, ['OPENAI_COMPATIBLE_BASE_URL'], undefined, 'OpenAI-compatible'),
      key: apiKey(rc, ctx, ['OPENAI_COMPATIBLE_API_KEY'], false, 'OpenAI-compatible'),
      options,
      body: {},
    });
  },
});

registerBackend({
  name: 'qwen_chat',
  aliases: ['qwen'],
  defaultModel: 'Qwen/Qwen3.5-4B',
  optionsSchema: QwenOptionsSchema,
  create(rc, ctx) {
    const options = parseOptions(QwenOptionsSchema, rc, ctx, 'qwen_chat');
    const envMode = fromEnvironment(ctx, ['QWEN_CHAT_THINKING_MODE'])?.value;
    const mode = options.thinking_mode !== 'server_default' ? options.thinking_mode : (envMode ?? 'server_default');
    if (!['server_default', 'enabled', 'disabled'].includes(mode)) {
      throw new FatalModelError(`QWEN_CHAT_THINKING_MODE: '${mode}' is not one of server_default, enabled, disabled`);
    }
    return build(rc, ctx, {
      backend: 'qwen_chat',
      baseUrl: baseUrl(rc, ctx, ['QWEN_CHAT_BASE_URL'], undefined, 'Qwen'),
      key: apiKey(rc, ctx, ['QWEN_CHAT_API_KEY'], false, 'Qwen'),
      options,
      body: mode === 'server_default' ? {} : { chat_template_kwargs: { enable_thinking: mode === 'enabled' } },
    });
  },
});

registerBackend({
  name: 'minimax_chat',
  aliases: ['minimax'],
  defaultModel: 'MiniMax-M3',
  optionsSchema: MiniMaxOptionsSchema,
  create(rc, ctx) {
    const options = parseOptions(MiniMaxOptionsSchema, rc, ctx, 'minimax_chat');
    const region = (options.region || fromEnvironment(ctx, ['MINIMAX_REGION'])?.value || 'global_en')
      .toLowerCase()
      .replace(/-/g, '_');
    const regional = MINIMAX_REGIONS[region];
    if (!regional)
      throw new FatalModelError(
        `model.${ctx.role}.options.region: unknown MiniMax region '${region}' (expected global_en or cn_zh)`,
      );
    // MiniMax-M2 models always think; others think only when asked.
    const thinks = /^minimax-m2/i.test(rc.model) || options.enable_thinking;
    return build(rc, ctx, {
      backend: 'minimax_chat',
      baseUrl: baseUrl(rc, ctx, ['MINIMAX_BASE_URL'], regional, 'MiniMax'),
      key: apiKey(rc, ctx, ['MINIMAX_API_KEY'], true, 'MiniMax'),
      options,
      body: { thinking: { type: thinks ? 'adaptive' : 'disabled' } },
    });
  },
});
