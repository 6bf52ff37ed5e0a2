/**
 * What a call costs: USD per one million tokens for input, cached input (prompt-cache reads),
 * cache writes and output. The table holds the providers' public list prices (standard tier,
 * short context), checked in November 2026; a role's `price` in the config overrides it. A model
 * not in the table has an unknown price, reported as unknown (null), never as zero: Azure
 * deployments and self-hosted models are priced by the user. Open-weight models (Qwen) carry a
 * hosted provider's list price; on your own server set `price: {input: 0, output: 0}`.
 */
import type { Price, RoleConfig } from '../config/schema.ts';
import type { Usage } from './types.ts';

/** Anthropic's rates derive from the input price: cache reads 0.1×, 5-minute writes 1.25×, 1-hour writes 2×. */
const anthropic = (input: number, output: number): Price => ({
  input,
  cached_input: input / 10,
  cache_write: input * 1.25,
  cache_write_1h: input * 2,
  output,
});

export const PRICE_TABLE: Readonly<Record<string, Price>> = {
  // OpenAI (and the same models on Azure when the deployment is named after the model). OpenAI
  // bills no cache writes: they cost the plain input rate.
  'gpt-5.5': { input: 5, cached_input: 0.5, output: 30 },
  'gpt-5.5-pro': { input: 30, output: 180 },
  'gpt-5.4': { input: 2.5, cached_input: 0.25, output: 15 },
  'gpt-5.4-mini': { input: 0.75, cached_input: 0.075, output: 4.5 },
  'gpt-5.4-nano': { input: 0.2, cached_input: 0.02, output: 1.25 },
  'gpt-5.4-pro': { input: 30, output: 180 },
  'gpt-5.1': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-5.1-codex': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-5': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-5-mini': { input: 0.25, cached_input: 0.025, output: 2 },
  'gpt-5-nano': { input: 0.05, cached_input: 0.005, output: 0.4 },
  'gpt-5-codex': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-4.1': { input: 2, cached_input: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cached_input: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cached_input: 0.025, output: 0.4 },
  'gpt-4o': { input: 2.5, cached_input: 1.25, output: 10 },
  'gpt-4o-mini': { input: 0.15, cached_input: 0.075, output: 0.6 },
  o1: { input: 15, cached_input: 7.5, output: 60 },
  o3: { input: 2, cached_input: 0.5, output: 8 },
  'o3-mini': { input: 1.1, cached_input: 0.55, output: 4.4 },
  'o4-mini': { input: 1.1, cached_input: 0.275, output: 4.4 },
  // Anthropic
  'claude-opus-4-6': anthropic(5, 25),
  'claude-opus-4-5': anthropic(5, 25),
  'claude-opus-4-1': anthropic(15, 75),
  'claude-opus-4': anthropic(15, 75),
  'claude-sonnet-4-6': anthropic(3, 15),
  'claude-sonnet-4-5': anthropic(3, 15),
  'claude-sonnet-4': anthropic(3, 15),
  'claude-3-7-sonnet': anthropic(3, 15),
  'claude-haiku-4-5': anthropic(1, 5),
  'claude-3-5-haiku': anthropic(0.8, 4),
  // Qwen on Alibaba Cloud Model Studio (international); open-weight Qwen at a hosted list price
  'qwen-max': { input: 1.6, output: 6.4 },
  'qwen-plus': { input: 0.4, output: 1.2 },
  'qwen-turbo': { input: 0.05, output: 0.2 },
  'qwen3.5-4b': { input: 0.04, cached_input: 0.02, output: 0.07 },
  'qwen3-8b': { input: 0.05, output: 0.4 },
  'qwen3-32b': { input: 0.08, output: 0.28 },
  // MiniMax (pay as you go, prompts up to 512K tokens)
  'minimax-m3': { input: 0.3, cached_input: 0.06, output: 1.2 },
  'minimax-m2': { input: 0.3, cached_input: 0.03, output: 1.2 },
  'minimax-m1': { input: 0.4, output: 2.2 },
};

/** `provider/Model-Name` → `model-name`: how names are looked up in the model tables. */
export function modelKey(model: string): string {
  return model.trim().toLowerCase().replace(/^.*\//, '');
}

/**
 * A table's entry for a model: an exact match (case-insensitive, without a `provider/` prefix),
 * else the longest key that the name starts with followed by a dash and a date or version tag
 * (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`).
 */
export function lookupModel<T>(table: Readonly<Record<string, T>>, model: string): T | undefined {
  const name = modelKey(model);
  if (table[name] !== undefined) return table[name];
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (
      name.startsWith(`${key}-`) &&
      /^-(\d{4}-?\d{2}-?\d{2}|\d{8}|latest|preview)/.test(name.slice(key.length)) &&
      (!best || key.length > best.length)
    )
      best = key;
  }
  return best ? table[best] : undefined;
}

/** The table's price of a model, or undefined. */
export function tablePrice(model: string): Price | undefined {
  return lookupModel(PRICE_TABLE, model);
}

/** The price of a role's model: the override, else the table, else undefined (unknown). */
export function priceOf(model: string, override?: Price): Price | undefined {
  return override ?? tablePrice(model);
}

/**
 * USD of one call; null when the price is unknown. Cache reads and cache writes are parts of
 * `input`: reads at `cached_input`, writes at `cache_write` (one-hour writes at `cache_write_1h`),
 * each falling back to the plain input rate when the price names none.
 */
export function costOf(usage: Usage, price: Price | undefined): number | null {
  if (!price) return null;
  const cached = Math.min(usage.cached, usage.input);
  const written = Math.min(usage.cacheWrite ?? 0, usage.input - cached);
  const writtenHour = Math.min(usage.cacheWrite1h ?? 0, written);
  const plain = usage.input - cached - written;
  const writeRate = price.cache_write ?? price.input;
  const usd =
    plain * price.input +
    cached * (price.cached_input ?? price.input) +
    (written - writtenHour) * writeRate +
    writtenHour * (price.cache_write_1h ?? writeRate) +
    usage.output * price.output;
  return usd * 1e-6;
}

/**
 * What a call sent through a batch API costs against the same call live: OpenAI's Batch API and
 * Anthropic's Message Batches both bill half the price of every token (cache reads and writes
 * included).
 */
export const BATCH_DISCOUNT = 0.5;

/** A role's prices: its own, else the table's (undefined: unknown); the simulator is free. */
export function rolePrice(rc: Pick<RoleConfig, 'backend' | 'model' | 'price'>): Price | undefined {
  return rc.backend === 'sim' ? { input: 0, output: 0 } : priceOf(rc.model, rc.price);
}
