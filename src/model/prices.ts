/**
 * What a call costs: USD per one million tokens for input, cached input and output. The table
 * holds list prices of common models (as published by the providers, checked 2025); a role's
 * `price` in the config overrides it. A model not in the table has an unknown price, reported as
 * unknown (null), never as zero: Azure deployments and self-hosted models are priced by the user.
 */
import type { Price } from '../config/schema.ts';
import type { Usage } from './types.ts';

export const PRICE_TABLE: Readonly<Record<string, Price>> = {
  // OpenAI (and the same models on Azure when the deployment is named after the model)
  'gpt-4o': { input: 2.5, cached_input: 1.25, output: 10 },
  'gpt-4o-mini': { input: 0.15, cached_input: 0.075, output: 0.6 },
  'gpt-4.1': { input: 2, cached_input: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cached_input: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cached_input: 0.025, output: 0.4 },
  'gpt-5': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-5-mini': { input: 0.25, cached_input: 0.025, output: 2 },
  'gpt-5-nano': { input: 0.05, cached_input: 0.005, output: 0.4 },
  'gpt-5-codex': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-5.1': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-5.1-codex': { input: 1.25, cached_input: 0.125, output: 10 },
  o1: { input: 15, cached_input: 7.5, output: 60 },
  o3: { input: 2, cached_input: 0.5, output: 8 },
  'o3-mini': { input: 1.1, cached_input: 0.55, output: 4.4 },
  'o4-mini': { input: 1.1, cached_input: 0.275, output: 4.4 },
  // Anthropic (cached input = cache reads)
  'claude-opus-4': { input: 15, cached_input: 1.5, output: 75 },
  'claude-opus-4-1': { input: 15, cached_input: 1.5, output: 75 },
  'claude-sonnet-4': { input: 3, cached_input: 0.3, output: 15 },
  'claude-sonnet-4-5': { input: 3, cached_input: 0.3, output: 15 },
  'claude-haiku-4-5': { input: 1, cached_input: 0.1, output: 5 },
  'claude-3-7-sonnet': { input: 3, cached_input: 0.3, output: 15 },
  'claude-3-5-haiku': { input: 0.8, cached_input: 0.08, output: 4 },
  // Qwen on Alibaba Cloud Model Studio (international), MiniMax
  'qwen-max': { input: 1.6, output: 6.4 },
  'qwen-plus': { input: 0.4, output: 1.2 },
  'qwen-turbo': { input: 0.05, output: 0.2 },
  'minimax-m1': { input: 0.4, output: 2.2 },
  'minimax-m2': { input: 0.3, cached_input: 0.03, output: 1.2 },
};

/**
 * The table's price of a model: an exact match (case-insensitive, without a `provider/`
 * prefix), else the longest entry that the name starts with followed by a dash and a date or
 * version tag (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`).
 */
export function tablePrice(model: string): Price | undefined {
  const name = model.trim().toLowerCase().replace(/^.*\//, '');
  if (PRICE_TABLE[name]) return PRICE_TABLE[name];
  let best: string | undefined;
  for (const key of Object.keys(PRICE_TABLE)) {
    if (name.startsWith(`${key}-`) && /^-(\d{4}-?\d{2}-?\d{2}|\d{8}|latest|preview)/.test(name.slice(key.length)) && (!best || key.length > best.length)) best = key;
  }
  return best ? PRICE_TABLE[best] : undefined;
}

/** The price of a role's model: the override, else the table, else undefined (unknown). */
export function priceOf(model: string, override?: Price): Price | undefined {
  return override ?? tablePrice(model);
}

/** USD of one call; null when the price is unknown. Cached input tokens are part of `input`. */
export function costOf(usage: Usage, price: Price | undefined): number | null {
  if (!price) return null;
  const cached = Math.min(usage.cached, usage.input);
  const perToken = 1e-6;
  return ((usage.input - cached) * price.input + cached * (price.cached_input ?? price.input) + usage.output * price.output) * perToken;
}
