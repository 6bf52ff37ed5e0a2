/**
 * `openai_chat`: OpenAI and Azure OpenAI, through Chat Completions, or the Responses API for the
 * models that need it. Sends `max_completion_tokens` and `reasoning_effort`: only to reasoning
 * models (capabilities.ts), and not when tools are offered, as the original does (some models
 * reject the pair).
 */
import { spawn } from 'node:child_process';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { z } from 'zod';
import { registerSecret } from '../../config/redact.ts';
import type { RoleConfig } from '../../config/schema.ts';
import { capabilitiesOf } from '../capabilities.ts';
import { priceOf } from '../prices.ts';
import { registerBackend, type BackendContext } from '../registry.ts';
import { FatalModelError } from '../types.ts';
import { AiSdkChatModel } from './ai-sdk-model.ts';
import { openaiCacheKey } from './prompt-cache.ts';
import { replyCapFetch } from './reply-cap.ts';
import { apiKey, baseUrl, droppedOptionNotice, effortOf, fromEnvironment, parseOptions } from './settings.ts';

export const OpenAIOptionsSchema = z
  .object({
    /** Which service: `azure` when the endpoint is an Azure resource or AZURE_OPENAI_ENDPOINT is set (auto). */
    provider: z.enum(['auto', 'openai', 'azure']).default('auto'),
    /** Chat Completions or the Responses API; auto = Responses for the models that need it. */
    api: z.enum(['auto', 'chat', 'responses']).default('auto'),
    /** Azure `api-version`; `v1` uses Azure's version-less /openai/v1 paths. Default: AZURE_OPENAI_API_VERSION, else 2024-12-01-preview. */
    api_version: z.string().default(''),
    /** Azure authentication: a key, a Microsoft Entra token from a variable, or the Azure CLI's token. auto = key, else token variable, else Azure CLI. */
    auth: z.enum(['auto', 'api_key', 'token_env', 'azure_cli']).default('auto'),
    /** Variable holding an Entra bearer token (auth token_env). */
    token_env: z.string().default('AZURE_OPENAI_AD_TOKEN'),
    /** Entra scope for the Azure CLI token. */
    ad_scope: z.string().default('https://cognitiveservices.azure.com/.default'),
  })
  .strict();

/** Models served only by the Responses API (the original's list): exact names or name-suffix variants. */
const RESPONSES_ONLY = ['gpt-5.3-codex', 'gpt-5.2-codex', 'gpt-5.1-codex', 'gpt-5-codex', 'codex-mini', 'gpt-5.4-pro'];
export function needsResponsesApi(model: string): boolean {
  const m = model.toLowerCase();
  return RESPONSES_ONLY.some((r) => m === r || m.startsWith(`${r}-`));
}

const AZURE_HOST = /\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)$/i;

/** An Entra token from the Azure CLI, refreshed five minutes before it expires. */
function azureCliToken(scope: string): () => Promise<string> {
  let cached: { token: string; expires: number } | undefined;
  const resource = scope.replace(/\/\.default$/, '');
  return async () => {
    if (cached && cached.expires - Date.now() > 300_000) return cached.token;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('az', ['account', 'get-access-token', '--resource', resource, '-o', 'json'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', () =>
        reject(
          new FatalModelError(
            'Azure OpenAI: no key and no Azure CLI: set AZURE_OPENAI_API_KEY, or AZURE_OPENAI_AD_TOKEN, or install the Azure CLI and run `az login`',
          ),
        ),
      );
      child.on('close', (code) =>
        code === 0
          ? resolve(stdout)
          : reject(
              new FatalModelError(
                `Azure OpenAI: \`az account get-access-token\` failed (${stderr.trim().split('\n')[0] ?? code}); run \`az login\` or set AZURE_OPENAI_API_KEY`,
              ),
            ),
      );
    });
    const parsed = JSON.parse(out) as { accessToken: string; expires_on?: number; expiresOn?: string };
    const expires = parsed.expires_on
      ? parsed.expires_on * 1000
      : parsed.expiresOn
        ? Date.parse(parsed.expiresOn)
        : Date.now() + 3_000_000;
    registerSecret(parsed.accessToken);
    cached = { token: parsed.accessToken, expires };
    return cached.token;
  };
}

/** The SDK's model (its package loaded on the first call) and the endpoint. */
function azureModel(
  rc: RoleConfig,
  ctx: BackendContext,
  o: z.infer<typeof OpenAIOptionsSchema>,
  useResponses: boolean,
): { sdk: () => Promise<LanguageModelV3>; endpoint: string } {
  const endpoint = baseUrl(rc, ctx, ['AZURE_OPENAI_ENDPOINT'], undefined, 'Azure OpenAI');
  const apiVersion = o.api_version || fromEnvironment(ctx, ['AZURE_OPENAI_API_VERSION'])?.value || '2024-12-01-preview';
  const versionless = apiVersion === 'v1';
  // Deployment URLs live under <resource>/openai; an endpoint given with /openai (or /openai/v1) is kept as is.
  const base = /\/openai(\/v1)?$/i.test(endpoint) ? endpoint : `${endpoint}/openai${versionless ? '/v1' : ''}`;
  let key: string | undefined;
  let tokenProvider: (() => Promise<string>) | undefined;
  const mode =
    o.auth === 'auto'
      ? apiKey(rc, ctx, ['AZURE_OPENAI_API_KEY'], false, 'Azure OpenAI')
        ? 'api_key'
        : ctx.environment[o.token_env]
          ? 'token_env'
          : 'azure_cli'
      : o.auth;
  if (mode === 'api_key') key = apiKey(rc, ctx, ['AZURE_OPENAI_API_KEY'], true, 'Azure OpenAI');
  else if (mode === 'token_env') {
    const token = ctx.environment[o.token_env]?.trim();
    registerSecret(token);
    if (!token)
      throw new FatalModelError(
        `model.${ctx.role}: the Entra token is missing: set the environment variable ${o.token_env}, or set AZURE_OPENAI_API_KEY`,
      );
    tokenProvider = async () => token;
  } else tokenProvider = azureCliToken(o.ad_scope);
  const sdk = async () => {
    const azure = (await import('@ai-sdk/azure')).createAzure({
      baseURL: base,
      apiVersion,
      useDeploymentBasedUrls: !versionless,
      ...(key ? { apiKey: key } : { tokenProvider: tokenProvider! }),
      fetch: replyCapFetch(ctx.role, rc.max_reply_bytes, ctx.fetch),
    });
    return useResponses ? azure.responses(rc.model) : azure.chat(rc.model);
  };
  return { sdk, endpoint: `${base}?api-version=${apiVersion}` };
}

function openaiModel(
  rc: RoleConfig,
  ctx: BackendContext,
  useResponses: boolean,
): { sdk: () => Promise<LanguageModelV3>; endpoint: string } {
  const endpoint = baseUrl(rc, ctx, ['OPENAI_BASE_URL'], 'https://api.openai.com/v1', 'OpenAI');
  const key = apiKey(rc, ctx, ['OPENAI_API_KEY'], true, 'OpenAI');
  const sdk = async () => {
    const openai = (await import('@ai-sdk/openai')).createOpenAI({
      baseURL: endpoint,
      apiKey: key,
      fetch: replyCapFetch(ctx.role, rc.max_reply_bytes, ctx.fetch),
    });
    return useResponses ? openai.responses(rc.model) : openai.chat(rc.model);
  };
  return { sdk, endpoint };
}

registerBackend({
  name: 'openai_chat',
  aliases: ['azure_openai', 'azure', 'azure-openai', 'openai_api'],
  defaultModel: 'gpt-4o',
  optionsSchema: OpenAIOptionsSchema,
  create(rc, ctx) {
    const o = parseOptions(OpenAIOptionsSchema, rc, ctx, 'openai_chat');
    const useResponses = o.api === 'responses' || (o.api === 'auto' && needsResponsesApi(rc.model));
    const isAzure =
      o.provider === 'azure' ||
      (o.provider === 'auto' &&
        (rc.base_url
          ? AZURE_HOST.test(new URL(rc.base_url).hostname)
          : Boolean(fromEnvironment(ctx, ['AZURE_OPENAI_ENDPOINT']))));
    const { sdk, endpoint } = isAzure ? azureModel(rc, ctx, o, useResponses) : openaiModel(rc, ctx, useResponses);
    const effort = effortOf(rc, ctx);
    const takesEffort = capabilitiesOf(rc.model, rc.capabilities).reasoningEffort;
    const dropped = droppedOptionNotice(rc, ctx);
    return new AiSdkChatModel({
      backend: 'openai_chat',
      model: rc.model,
      skillFiles: rc.skill_files,
      // Azure's batches are deployments of their own (global batch), not the requests of this one.
      batchable: !isAzure,
      sdk,
      endpoint: `${useResponses ? 'responses' : 'chat'} ${endpoint}`,
      url: endpoint,
      price: priceOf(rc.model, rc.price),
      maxOutputTokens: rc.max_output_tokens,
      temperature: rc.temperature,
      shape: (req, base) => {
        const openai: Record<string, string | number | boolean> = { strictJsonSchema: false };
        const e = req.reasoningEffort ?? effort;
        if (e && !(req.tools?.length && !useResponses)) {
          if (takesEffort) openai.reasoningEffort = e;
          else dropped('reasoning_effort', e);
        }
        // Chat Completions: the token cap goes out as max_completion_tokens, as the original sends it.
        if (!useResponses && base.maxOutputTokens !== undefined) openai.maxCompletionTokens = base.maxOutputTokens;
        // Azure caches by itself and has no such parameter.
        if (rc.prompt_cache && !isAzure) openai.promptCacheKey = openaiCacheKey(ctx.role, req);
        return {
          providerOptions: { openai },
          nativeSchema: rc.json_schema,
          ...(useResponses && base.maxOutputTokens !== undefined ? { maxOutputTokens: base.maxOutputTokens } : {}),
          ...(base.temperature !== undefined ? { temperature: base.temperature } : {}),
        };
      },
    });
  },
});
