/**
 * Our requests in the AI SDK's provider-level form, and its results back in ours. Images given as
 * data URIs or local files are read here (once per call), so every provider sees bytes and a
 * media type; http(s) URLs are passed on for the provider to fetch.
 */
import fs from 'node:fs';
import path from 'node:path';
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FilePart,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3TextPart,
  LanguageModelV3Usage,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import {
  FatalModelError,
  type ChatRequest,
  type ImagePart,
  type Message,
  type ToolCall,
  type Usage,
} from '../types.ts';

const MEDIA_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.bmp': 'image/bmp',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
};

/** An image part as bytes (or a URL) with its media type, and its detail for the OpenAI providers. */
export function imageFilePart(part: ImagePart): LanguageModelV3FilePart {
  const file = imageData(part);
  // Chat Completions reads the `openai` key; the Responses API the provider's own (`openai` or `azure`).
  return part.detail
    ? { ...file, providerOptions: { openai: { imageDetail: part.detail }, azure: { imageDetail: part.detail } } }
    : file;
}

function imageData(part: ImagePart): LanguageModelV3FilePart {
  const src = part.image.trim();
  const dataUri = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(src);
  if (dataUri) {
    const mediaType = part.mediaType ?? dataUri[1] ?? 'image/png';
    const data = dataUri[2] ? dataUri[3]! : Buffer.from(decodeURIComponent(dataUri[3]!)).toString('base64');
    return { type: 'file', mediaType, data };
  }
  if (/^https?:\/\//i.test(src)) return { type: 'file', mediaType: part.mediaType ?? 'image/*', data: new URL(src) };
  const file = src.startsWith('file://') ? new URL(src).pathname : src;
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    throw new FatalModelError(`cannot read the image ${file}: ${(err as Error).message}`);
  }
  const mediaType = part.mediaType ?? MEDIA_TYPES[path.extname(file).toLowerCase()];
  if (!mediaType)
    throw new FatalModelError(
      `the image ${file} has an unknown type; name it .png, .jpg, .gif or .webp, or give mediaType`,
    );
  return { type: 'file', mediaType, data: new Uint8Array(bytes) };
}

function userContent(content: Message['content']): (LanguageModelV3TextPart | LanguageModelV3FilePart)[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p) => (p.type === 'text' ? { type: 'text' as const, text: p.text } : imageFilePart(p)));
}

/** The conversation in the provider-level prompt form; `system` first when given (with `systemOptions`: a cache breakpoint). */
export function toPrompt(
  req: ChatRequest,
  systemSuffix = '',
  systemOptions?: SharedV3ProviderOptions,
): LanguageModelV3Message[] {
  const prompt: LanguageModelV3Message[] = [];
  const system = `${req.system ?? ''}${systemSuffix}`;
  if (system)
    prompt.push({ role: 'system', content: system, ...(systemOptions ? { providerOptions: systemOptions } : {}) });
  for (const m of req.messages) {
    if (m.role === 'user') prompt.push({ role: 'user', content: userContent(m.content) });
    else if (m.role === 'assistant') {
      const parts: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = [];
      if (m.content) parts.push({ type: 'text', text: m.content });
      for (const call of m.toolCalls ?? [])
        parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.input });
      prompt.push({ role: 'assistant', content: parts });
    } else {
      prompt.push({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: m.toolCallId,
            toolName: m.toolName,
            output: { type: 'text', value: m.content },
          },
        ],
      });
    }
  }
  return prompt;
}

export function toTools(req: ChatRequest): Pick<LanguageModelV3CallOptions, 'tools' | 'toolChoice'> {
  if (!req.tools?.length) return {};
  const tools: LanguageModelV3FunctionTool[] = req.tools.map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description,
    inputSchema: t.parameters as LanguageModelV3FunctionTool['inputSchema'],
  }));
  return { tools, toolChoice: { type: 'auto' } };
}

/** Text (reasoning excluded) and tool calls of a result. */
export function readContent(content: LanguageModelV3Content[]): { text: string; toolCalls: ToolCall[] } {
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const part of content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'tool-call') {
      let input: unknown;
      try {
        input = part.input ? JSON.parse(part.input) : {};
      } catch {
        input = part.input;
      }
      toolCalls.push({ id: part.toolCallId, name: part.toolName, input });
    }
  }
  return { text, toolCalls };
}

/**
 * Usage as the provider reported it. Cache writes come from the SDK (Anthropic's
 * `cache_creation_input_tokens`, OpenAI's `cache_write_tokens`), else from the raw usage of an
 * OpenAI-compatible server that reports `prompt_tokens_details.cache_write_tokens`; the one-hour
 * share from Anthropic's `cache_creation.ephemeral_1h_input_tokens`. They are recorded only when
 * there are some.
 */
export function readUsage(u: LanguageModelV3Usage | undefined): Usage {
  const raw = (u?.raw ?? {}) as {
    prompt_tokens_details?: { cache_write_tokens?: unknown };
    cache_creation?: { ephemeral_1h_input_tokens?: unknown };
  };
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
  const cacheWrite = count(u?.inputTokens.cacheWrite ?? raw.prompt_tokens_details?.cache_write_tokens);
  const cacheWrite1h = Math.min(cacheWrite, count(raw.cache_creation?.ephemeral_1h_input_tokens));
  return {
    input: u?.inputTokens.total ?? 0,
    output: u?.outputTokens.total ?? 0,
    cached: u?.inputTokens.cacheRead ?? 0,
    reasoning: u?.outputTokens.reasoning ?? 0,
    ...(cacheWrite ? { cacheWrite } : {}),
    ...(cacheWrite1h ? { cacheWrite1h } : {}),
  };
}
