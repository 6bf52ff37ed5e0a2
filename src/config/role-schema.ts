/**
 * The settings of one model role (`model.target`, `model.optimizer`, `model.judge`, and a transfer
 * target given as a mapping): the backend and model, where it is reached, its limits, retries and
 * waits, its price and what it accepts. Part of the configuration schema (`schema.ts`).
 */
import { z } from 'zod';
import { atMost, DAY_S, HUNDRED_MILLION, THOUSAND, TEN_THOUSAND } from './bounds.ts';

/** A reasoning effort ('' = unset). */
export const EffortSchema = z.enum(['', 'none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

/** USD per one million tokens. */
export const PriceSchema = z
  .object({
    /** USD per 1M input tokens. */
    input: z.number().nonnegative(),
    /** USD per 1M output tokens. */
    output: z.number().nonnegative(),
    /** USD per 1M input tokens read from the provider's prompt cache; default: the input rate. */
    cached_input: z.number().nonnegative().optional(),
    /** Input tokens written to the provider's prompt cache (Anthropic: 1.25× input); default: the input rate. */
    cache_write: z.number().nonnegative().optional(),
    /** One-hour cache writes (Anthropic: 2× input); default: `cache_write`. */
    cache_write_1h: z.number().nonnegative().optional(),
  })
  .strict();

/** What a role's model accepts, overriding the built-in table (unset = the table's answer). */
export const CapabilitiesSchema = z
  .object({
    /** Send the reasoning effort (OpenAI's `reasoning_effort` / `reasoning.effort`). */
    reasoning_effort: z.boolean().optional(),
    /** Extended thinking (Anthropic's `thinking`, from `options.thinking_budget`). */
    thinking: z.boolean().optional(),
  })
  .strict();

export const RoleSchema = z
  .object({
    /** Backend name or alias (`openai_chat`, `anthropic`, `openai_compatible`, `sim`, …); '' = from `model.backend`. */
    backend: z.string().default(''),
    /** Model or deployment name; '' = the backend's default. */
    model: z.string().default(''),
    /** Endpoint for OpenAI-compatible servers, Azure resources and gateways. */
    base_url: z.string().default(''),
    /** Name of the environment variable holding the key; '' = the backend's default variable. */
    api_key_env: z.string().default(''),
    /** Concurrent calls allowed in this role's pool. */
    concurrency: z.number().int().positive().max(TEN_THOUSAND, atMost(TEN_THOUSAND)).default(8),
    /** Name of the pool whose limits this role shares ('' = a pool of its own). */
    pool: z.string().default(''),
    /** Requests per minute (0 = no limit). */
    rpm: z.number().nonnegative().default(0),
    /** Tokens per minute (0 = no limit). */
    tpm: z.number().nonnegative().default(0),
    /** Attempts after the first one, for retryable failures. */
    max_retries: z.number().int().nonnegative().max(THOUSAND, atMost(THOUSAND)).default(5),
    /** Per-call timeout in seconds. */
    timeout_s: z.number().positive().max(DAY_S, atMost(DAY_S)).default(300),
    /** Largest reply body accepted, in bytes; a longer reply fails that call (not retried). */
    max_reply_bytes: z
      .number()
      .int()
      .positive()
      .default(8 * 1024 * 1024),
    /** First wait before a retry, in seconds; doubles with each retry (with jitter). */
    backoff_s: z.number().nonnegative().max(DAY_S, atMost(DAY_S)).default(1),
    /** Longest wait between retries, in seconds. */
    backoff_max_s: z.number().nonnegative().max(DAY_S, atMost(DAY_S)).default(30),
    /** The most one call waits between its attempts, in all, in seconds; a provider asking for longer stops the run (resumably). */
    max_wait_s: z.number().positive().default(300),
    /** Sampling temperature; unset = the provider's default. */
    temperature: z.number().min(0).max(2).optional(),
    /** '' = use `model.reasoning_effort`. */
    reasoning_effort: EffortSchema.default(''),
    /** Output token cap of each call of this role; unset = the call's own cap, else the backend's. */
    max_output_tokens: z.number().int().positive().max(HUNDRED_MILLION, atMost(HUNDRED_MILLION)).optional(),
    /** Ask the provider for JSON-schema constrained output where it supports it. */
    json_schema: z.boolean().default(true),
    /** Price override, USD per 1M tokens; otherwise the built-in table (unknown = reported unknown). */
    price: PriceSchema.optional(),
    /** Backend-specific settings, validated by the backend (API version, thinking switch, …). */
    options: z.record(z.string(), z.unknown()).default({}),
    /**
     * How a chat model gets a skill package's files besides `SKILL.md`: `inline` in its system
     * prompt, `tool` through a `read_skill_file` tool it calls for the files it needs, `auto` the
     * tool when the files' text is over 2,000 tokens, else inline. Agent CLIs and the simulator
     * open the files themselves and ignore it.
     */
    skill_files: z.enum(['inline', 'tool', 'auto']).default('auto'),
    /**
     * Ask the provider to cache the stable start of each request (the instructions and the skill),
     * which every rollout of one skill shares: Anthropic gets a `cache_control` breakpoint on the
     * system prompt when it is over the model's minimum, OpenAI a `prompt_cache_key` per role and
     * skill. Cached input is billed at the cached rate; the answers are the same.
     */
    prompt_cache: z.boolean().default(true),
    /**
     * Send the calls whose answers can wait (the final evaluation on test, `skillopt eval`,
     * transfer) through the provider's batch API at half price: OpenAI's Batch API or Anthropic's
     * Message Batches. A batch takes minutes to hours; its id is journaled, so a stopped run
     * resumes the batch it sent. Failed items are sent again one by one at the live price.
     */
    batch: z.boolean().default(false),
    /** The baseline's selection evaluation too (training waits for that batch before step 1). */
    batch_baseline: z.boolean().default(false),
    /** Seconds between two looks at a batch's progress. */
    batch_poll_s: z.number().positive().max(3600, atMost(3600)).default(30),
    /** Which request options the model takes; overrides the built-in table (src/model/capabilities.ts). */
    capabilities: CapabilitiesSchema.default({}),
  })
  .strict();

/**
 * A transfer target given as an object: the `BACKEND:MODEL` role with the fields it sets replaced
 * (an endpoint, a key variable, a CLI's options, a concurrency). Fields have no defaults here.
 */
export const TransferTargetSchema = z.union(
  [
    z.string(),
    z
      .object(
        Object.fromEntries(
          Object.entries(RoleSchema.shape).map(([k, v]) => [
            k,
            (v instanceof z.ZodDefault ? v.unwrap() : v).optional(),
          ]),
        ),
      )
      .extend({ backend: z.string().min(1) })
      .strict() as unknown as z.ZodType<{ backend: string } & Partial<Omit<z.infer<typeof RoleSchema>, 'backend'>>>,
  ],
  {
    // A mapping's own problems (a key of the wrong type, no backend), else what is expected.
    error: (issue) => {
      const input = issue.input;
      const errors =
        issue.code === 'invalid_union' && input && typeof input === 'object' && !Array.isArray(input)
          ? issue.errors[1]
          : undefined;
      const said = errors?.map((e) => `${e.path.join('.')}: ${e.message.replace(/^Invalid input: /, '')}`).join('; ');
      return said || 'expected BACKEND:MODEL or a mapping of role settings with its backend';
    },
  },
);

export type RoleConfig = z.infer<typeof RoleSchema>;
export type TransferTarget = z.infer<typeof TransferTargetSchema>;
export type Price = z.infer<typeof PriceSchema>;
export type Capabilities = z.infer<typeof CapabilitiesSchema>;
