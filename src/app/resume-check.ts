/**
 * What a resume may change. A run continues with the settings it started with: models, backends,
 * data and hyperparameters decide what is trained and may not change. How the models are reached
 * and how much may be spent may: endpoints, keys, pools, retries, timeouts, limits, caching,
 * concurrency, where rollouts run (`run.queue`).
 */
import { redact } from '../config/redact.ts';
import { ConfigSchema, type Config } from '../config/schema.ts';
import { getBackend } from '../model/registry.ts';

/** Role settings that say how a model is reached, not which model it is. */
const ENDPOINT_KEYS = [
  'base_url',
  'api_key_env',
  'concurrency',
  'pool',
  'rpm',
  'tpm',
  'max_retries',
  'timeout_s',
  'backoff_s',
  'backoff_max_s',
  'max_reply_bytes',
  'max_wait_s',
  'price',
  'prompt_cache',
  'batch',
  'batch_poll_s',
  'options.latency_ms',
];

const RESUMABLE_CHANGES: RegExp[] = [
  /^budget\./,
  /^cache\./,
  /^run\./,
  new RegExp(
    `^model\\.(target|optimizer|judge)\\.(${ENDPOINT_KEYS.map((k) => k.replace('.', '\\.')).join('|')})(\\.|$)`,
  ),
  /^env\.workers$/,
  /^env\.out_root$/,
  /^gradient\.analyst_workers$/,
  /^evaluation\.gate_overlap$/,
  // Where test figures are sealed, and whether a sealed one is scored again: the final evaluation's, not the training's.
  /^evaluation\.audit\.(seal_dir|rescore_test)$/,
];

/**
 * Settings added since runs were first written, with the value that does what those runs did (a
 * function of the stored config when it depends on it; undefined: the key was never there).
 */
const ADDED_SINCE: Record<string, unknown> = {
  'gradient.merge_strategy': 'staged',
  'evaluation.audit.checks': [],
  // The sim env scored by exact match before it could be judged.
  'env.scorer': (stored: { env?: { name?: unknown } }) => (stored.env?.name === 'sim' ? 'exact' : undefined),
};

export function isResumableChange(key: string): boolean {
  return RESUMABLE_CHANGES.some((r) => r.test(key));
}

function flatten(value: unknown, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else out[prefix] = value;
  return out;
}

/**
 * A stored config with the keys it lacks at their defaults: a run started by an earlier version,
 * which had no such key, ran with what the default does (a key added later is off by default).
 */
function withDefaults(stored: unknown): unknown {
  const parsed = ConfigSchema.safeParse(stored);
  if (!parsed.success) return stored;
  for (const role of ['target', 'optimizer'] as const) {
    const rc = parsed.data.model[role];
    const options = getBackend(rc.backend)?.optionsSchema?.safeParse(rc.options ?? {});
    if (options?.success) rc.options = options.data as Record<string, unknown>;
  }
  return JSON.parse(JSON.stringify(parsed.data));
}

/**
 * The training settings that differ between a run's stored config (as `config.json` holds it,
 * secrets redacted) and `config`, as `key: before -> after` lines; empty when the run may resume.
 */
export function trainingChanges(stored: unknown, config: Config, secretPaths: ReadonlySet<string>): string[] {
  const before = flatten(withDefaults(stored));
  // A key added since, absent from the stored config, counts at the value that does what the run did.
  const storedKeys = flatten(stored);
  for (const [k, v] of Object.entries(ADDED_SINCE)) {
    const was = typeof v === 'function' ? v(stored ?? {}) : v;
    if (!(k in storedKeys) && was !== undefined) before[k] = was;
  }
  const now = flatten(JSON.parse(JSON.stringify(redact(config, secretPaths))));
  return [...new Set([...Object.keys(before), ...Object.keys(now)])]
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(now[k]) && !isResumableChange(k))
    .map((k) => `${k}: ${JSON.stringify(before[k])} -> ${JSON.stringify(now[k])}`);
}
