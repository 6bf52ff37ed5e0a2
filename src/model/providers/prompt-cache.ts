/**
 * Asking the providers to cache what requests share. Every request is laid out stable part
 * first: the system prompt (the skill and the instructions; an analyst's guidance) before the
 * item, so every rollout of one skill starts with the same text.
 *
 * - Anthropic caches only up to a `cache_control` breakpoint, and only a prefix of at least the
 *   model's minimum length: the system prompt gets one when it is that long (the tools, which
 *   come before it, are cached with it).
 * - OpenAI caches any prompt of 1,024 tokens or more by itself, on the machine its prefix is
 *   routed to; `prompt_cache_key` sends the requests of one role whose system prompts start
 *   alike to the same one. Not one key per skill: the candidates of a run share most of their
 *   text, and a key per candidate would send each to a cold machine (`npm run bench:cache`
 *   measured such keys at 1.25x the input cost of the shared one).
 *
 * Cache reads and writes are priced by the price table (`prices.ts`), and recorded as the
 * providers report them.
 */
import { createHash } from 'node:crypto';
import type { SharedV3ProviderOptions } from '@ai-sdk/provider';
import { countTokens } from '../../skill/document.ts';
import { modelKey } from '../prices.ts';
import type { ChatRequest } from '../types.ts';

/** Anthropic's shortest cacheable prefix per model, in tokens (its prompt-caching documentation, November 2026). */
const ANTHROPIC_MINIMUM: readonly [RegExp, number][] = [
  [/^claude-(opus-4-[56]|haiku-4-5)/, 4096],
  [/^claude-(sonnet-4-6|3-5-haiku|3-haiku)/, 2048],
];
const ANTHROPIC_DEFAULT_MINIMUM = 1024;

export function anthropicCacheMinimum(model: string): number {
  const name = modelKey(model);
  return ANTHROPIC_MINIMUM.find(([pattern]) => pattern.test(name))?.[1] ?? ANTHROPIC_DEFAULT_MINIMUM;
}

/** The provider options of a system prompt worth a breakpoint, for `model`; undefined when it is too short. */
export function anthropicSystemCache(req: ChatRequest, model: string): SharedV3ProviderOptions | undefined {
  const system = req.system ?? '';
  // Characters are at least as many as tokens: a short prompt is ruled out without counting.
  if (system.length < anthropicCacheMinimum(model)) return undefined;
  const tools = JSON.stringify(req.tools ?? []);
  if (countTokens(system) + countTokens(tools) < anthropicCacheMinimum(model)) return undefined;
  return { anthropic: { cacheControl: { type: 'ephemeral' } } };
}

/** Characters of the system prompt that choose the key: the instructions and the start of the skill. */
const KEY_PREFIX = 2048;

/** The key that routes the requests of one role, whose system prompts start alike, to one OpenAI cache. */
export function openaiCacheKey(role: string, req: ChatRequest): string {
  const start = (req.system ?? '').slice(0, KEY_PREFIX);
  return `skillopt-${role}-${createHash('sha256').update(start).digest('hex').slice(0, 16)}`;
}
