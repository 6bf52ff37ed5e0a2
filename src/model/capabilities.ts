/**
 * Which request options a model takes, next to the price table. OpenAI's reasoning effort goes
 * only to its reasoning models (the o-series, the gpt-5 family and later, but not the gpt-5 chat
 * variants); gpt-4o, gpt-4.1 and their kin answer 400 to it. Anthropic's extended thinking
 * (`options.thinking_budget`) goes only to the models that have it. A role's `capabilities`
 * overrides the table; a model the table does not know (an Azure deployment name, a gateway's
 * alias) gets what its configuration asks for.
 */
import type { Capabilities } from '../config/schema.ts';
import { modelKey } from './prices.ts';

export interface ModelCapabilities {
  /** The reasoning effort may be sent. */
  reasoningEffort: boolean;
  /** Extended thinking may be asked for. */
  thinking: boolean;
}

/** First match wins; an option a rule leaves out is decided by a later rule, else allowed. */
const RULES: readonly { pattern: RegExp; reasoningEffort?: boolean; thinking?: boolean }[] = [
  { pattern: /^o1-(mini|preview)/, reasoningEffort: false },
  { pattern: /^(o\d|codex-mini)/, reasoningEffort: true },
  { pattern: /^gpt-5-chat/, reasoningEffort: false },
  { pattern: /^gpt-([5-9]|\d{2,})/, reasoningEffort: true },
  { pattern: /^(gpt-[34]|chatgpt-)/, reasoningEffort: false },
  // Claude 3 and 3.5 have no extended thinking; Opus 4.7 on and the 5 generation think adaptively
  // and refuse a manual budget ("thinking.type.enabled is not supported for this model").
  { pattern: /^claude-(3-5-|3-haiku|3-opus|3-sonnet|2|instant)/, thinking: false },
  { pattern: /^claude-(opus-4-[7-9]|(opus|sonnet|haiku)-5|fable|mythos)/, thinking: false },
  { pattern: /^claude-(3-7-sonnet|(opus|sonnet|haiku)-4)/, thinking: true },
];

function fromTable(model: string, option: 'reasoningEffort' | 'thinking'): boolean | undefined {
  const name = modelKey(model);
  for (const rule of RULES) if (rule[option] !== undefined && rule.pattern.test(name)) return rule[option];
  return undefined;
}

/** What `model` takes: the role's override, else the table, else yes. */
export function capabilitiesOf(model: string, override: Capabilities = {}): ModelCapabilities {
  return {
    reasoningEffort: override.reasoning_effort ?? fromTable(model, 'reasoningEffort') ?? true,
    thinking: override.thinking ?? fromTable(model, 'thinking') ?? true,
  };
}
