/**
 * A `ChatModel` over an AI SDK language model: one attempt per `complete` (the scheduler owns
 * retries), failures classified, usage read in full, cost priced, JSON replies validated. Each
 * backend supplies the SDK model and its provider-specific options.
 */
import type { LanguageModelV3, LanguageModelV3CallOptions, SharedV3ProviderOptions } from '@ai-sdk/provider';
import { z } from 'zod';
import type { Price } from '../../config/schema.ts';
import { CallFailure, classifyFailure, exhaustedWindowMs, headerMap } from '../failure.ts';
import { costOf } from '../prices.ts';
import { validReply } from '../structured.ts';
import type { ChatModel, ChatRequest, ChatResponse } from '../types.ts';
import { readContent, readUsage, toPrompt, toTools } from './wire.ts';

/** A provider's answer plus what the scheduler should know: a rate-limit window that is used up. */
export interface ProviderResponse extends ChatResponse {
  waitMs?: number;
}

export interface CallShape {
  /** Provider options of this call (reasoning, thinking, token field, …). */
  providerOptions?: SharedV3ProviderOptions;
  /** Provider options of the system message (a prompt-cache breakpoint). */
  systemOptions?: SharedV3ProviderOptions;
  /** Ask for JSON-schema constrained output natively. */
  nativeSchema: boolean;
  maxOutputTokens?: number;
  temperature?: number;
}

export interface AiSdkModelOptions {
  backend: string;
  model: string;
  /** The endpoint, part of the response-cache key: two servers may answer differently. */
  endpoint: string;
  /** The base URL, for messages about a server that cannot be reached. */
  url: string;
  /** The SDK's model, made on the first call: the provider's package loads only when a call is made. */
  sdk: () => Promise<LanguageModelV3>;
  price: Price | undefined;
  /** Output cap of the role, used when the request sets none. */
  maxOutputTokens?: number;
  temperature?: number;
  /** How it gets a package's files (the role's `skill_files`): it calls tools. */
  skillFiles?: ChatModel['skillFiles'];
  /** The provider has a batch API that takes this model's requests as they are sent live. */
  batchable?: boolean;
  /** The per-call shape: provider options and whether JSON-schema mode is used. */
  shape(req: ChatRequest, base: { maxOutputTokens?: number; temperature?: number }): CallShape;
}

export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
}

/** The schema described in words, for providers without a JSON-schema mode. */
export function describedSchema(req: ChatRequest): string {
  return `\n\nReply with one JSON object and nothing else. It must follow this JSON Schema:\n\`\`\`json\n${JSON.stringify(jsonSchemaOf(req.schema!))}\n\`\`\``;
}

export class AiSdkChatModel implements ChatModel {
  readonly id: string;
  /** Settings that shape answers beyond the request itself (for the response-cache key). */
  readonly settings: Record<string, unknown>;
  readonly url: string;
  readonly priced: boolean;
  readonly skillFiles?: ChatModel['skillFiles'];
  readonly batchable: boolean;
  private sdk: Promise<LanguageModelV3> | undefined;

  constructor(private readonly o: AiSdkModelOptions) {
    this.id = `${o.backend}:${o.model}`;
    this.priced = o.price !== undefined;
    this.settings = { endpoint: o.endpoint };
    this.url = o.url;
    this.batchable = o.batchable ?? false;
    if (o.skillFiles) this.skillFiles = o.skillFiles;
  }

  async complete(req: ChatRequest): Promise<ProviderResponse> {
    const started = performance.now();
    const shape = this.o.shape(req, {
      maxOutputTokens: req.maxOutputTokens ?? this.o.maxOutputTokens,
      temperature: req.temperature ?? this.o.temperature,
    });
    const useNative = Boolean(req.schema && shape.nativeSchema && !req.tools?.length);
    const options: LanguageModelV3CallOptions = {
      prompt: toPrompt(req, req.schema && !useNative ? describedSchema(req) : '', shape.systemOptions),
      ...(shape.maxOutputTokens !== undefined ? { maxOutputTokens: shape.maxOutputTokens } : {}),
      ...(shape.temperature !== undefined ? { temperature: shape.temperature } : {}),
      ...(useNative
        ? {
            responseFormat: {
              type: 'json',
              schema: jsonSchemaOf(req.schema!) as never,
              name: req.schemaName ?? 'reply',
            },
          }
        : {}),
      ...toTools(req),
      ...(shape.providerOptions ? { providerOptions: shape.providerOptions } : {}),
      ...(req.signal ? { abortSignal: req.signal } : {}),
    };
    const sdk = await (this.sdk ??= this.o.sdk());
    let result;
    try {
      result = await sdk.doGenerate(options);
    } catch (err) {
      throw classifyFailure(err, this.id) ?? err;
    }
    const { text, toolCalls } = readContent(result.content);
    const usage = readUsage(result.usage);
    if (!text.trim() && toolCalls.length === 0) {
      const reason = result.finishReason.raw ?? result.finishReason.unified;
      if (result.finishReason.unified === 'length') {
        const spent = `${usage.output} output tokens${usage.reasoning ? `, ${usage.reasoning} of them reasoning` : ''}`;
        throw new CallFailure(
          `${this.id}: the reply was cut off by the output token limit before any answer (finish reason: ${reason}; ${spent})`,
          'truncated',
          200,
        );
      }
      throw new CallFailure(`${this.id}: the reply was empty (finish reason: ${reason})`, 'bad_response', 200);
    }
    if (req.schema && result.finishReason.unified === 'length') {
      // The object ends where the limit struck: whatever a repair made of it would not be the reply.
      throw new CallFailure(
        `${this.id}: the structured reply was cut off by the output token limit (finish reason: ${result.finishReason.raw ?? 'length'}; ${usage.output} output tokens)`,
        'truncated',
        200,
        undefined,
        undefined,
        { outputLimit: shape.maxOutputTokens, usage, costUsd: costOf(usage, this.o.price) },
      );
    }
    const res: ProviderResponse = {
      text,
      usage,
      latencyMs: performance.now() - started,
      from: 'provider',
      costUsd: costOf(usage, this.o.price),
    };
    if (toolCalls.length) res.toolCalls = toolCalls;
    if (req.schema) {
      const parsed = validReply(req.schema, text);
      if (parsed.ok) res.parsed = parsed.value;
    }
    const wait = exhaustedWindowMs(headerMap(result.response?.headers));
    if (wait) res.waitMs = wait;
    return res;
  }
}
