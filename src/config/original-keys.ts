/**
 * The original SkillOpt's backend keys: flat settings in its `model` section
 * (`azure_openai_endpoint`, `target_qwen_chat_thinking_mode`, `minimax_region`,
 * `codex_exec_sandbox`, …) and its `human_feedback` section. They have no place in our schema,
 * so the loader takes them out of the tree before validation, then:
 *
 * - honours those whose feature exists, by mapping them onto the settings of the roles that use
 *   that backend (a role-specific key wins over the shared one; a role's own setting wins over
 *   both; nothing happens for a backend no role uses, as in the original);
 * - names the rest once, in one warning per feature, saying what is not built yet;
 * - never keeps a key's value when the key holds a secret: keys are read from environment
 *   variables only, so the warning says which variable to set.
 *
 * A blank value (`""` or null, as the original's base file has for most of them) asks for
 * nothing and passes in silence.
 *
 * This file is the table: every key, which backends it serves and how its value is read.
 * `original-keys-apply.ts` takes the keys out of a config and applies them;
 * `original-keys-special.ts` holds the keys whose mapping is more than a copy.
 */
import { ConfigError } from '../errors.ts';

export type RoleName = 'target' | 'optimizer';
export const ROLE_NAMES: RoleName[] = ['target', 'optimizer'];

/** A role setting a key maps onto: where it goes and how the value is read. */
export interface Setting {
  /** Dotted path inside the role (`base_url`, `options.thinking_mode`, …). */
  field: string;
  read: (value: unknown, where: string) => unknown;
}

export type Rule =
  /** Honoured for roles on one of `backends`; `role` is set for the role-prefixed spelling. */
  | { kind: 'setting'; backends: string[]; role?: RoleName; setting: Setting; name: string; rank: number }
  /** Applied by a function of its own (see `applySpecial`). */
  | { kind: 'special'; backends: string[]; role?: RoleName; name: string; rank: number }
  /** A setting of the run, not of a role (`model.<field>`), whichever backends the roles use. */
  | { kind: 'model'; field: 'trace_to_optimizer'; read: (value: unknown, where: string) => unknown }
  /** A key that would hold a secret: never kept; the warning names the variable. */
  | { kind: 'secret'; variable: string }
  /** Accepted and ignored, with the reason (only said when a role is on one of `backends`). */
  | { kind: 'unsupported'; feature: string; backends?: string[] };

export const text = (value: unknown, where: string): string => {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number') return String(value);
  throw new ConfigError(`${where}: expected a string, got ${JSON.stringify(value)}`);
};
export const number = (value: unknown, where: string): number => {
  const n = typeof value === 'number' ? value : Number(String(value).trim());
  if (!Number.isFinite(n)) throw new ConfigError(`${where}: expected a number, got ${JSON.stringify(value)}`);
  return n;
};
export const bool = (value: unknown, where: string): boolean => {
  if (typeof value === 'boolean') return value;
  const v = String(value).trim().toLowerCase();
  if (['true', 'yes', '1', 'on'].includes(v)) return true;
  if (['false', 'no', '0', 'off'].includes(v)) return false;
  throw new ConfigError(`${where}: expected true or false, got ${JSON.stringify(value)}`);
};
const positiveInteger = (value: unknown, where: string): number => {
  const n = number(value, where);
  if (!Number.isInteger(n) || n <= 0)
    throw new ConfigError(`${where}: expected a positive whole number, got ${JSON.stringify(value)}`);
  return n;
};
const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];
/** A reasoning effort of the original's agent keys: off and none turn it off; Claude Code's `max` is its highest. */
const effort = (value: unknown, where: string): string => {
  const v = text(value, where).toLowerCase();
  if (v === 'off') return 'none';
  if (v === 'max') return 'xhigh';
  if (!EFFORTS.includes(v))
    throw new ConfigError(
      `${where}: expected one of ${EFFORTS.join(', ')} (or off, max), got ${JSON.stringify(value)}`,
    );
  return v;
};
/** The original's Qwen and MiniMax temperature: "", none, off or null leave it to the server. */
const temperature = (value: unknown, where: string): number | undefined =>
  typeof value === 'string' && ['none', 'off', 'null'].includes(value.trim().toLowerCase())
    ? undefined
    : number(value, where);

const CAP =
  'a per-backend cap on output tokens is not supported; ignored (model.<role>.max_output_tokens sets the output size)';

/** Every key of the original's `model` section that our schema does not have, with its rule. */
export const ORIGINAL_MODEL_KEYS: Record<string, Rule> = {};
const PREFIXES: [string, RoleName | undefined, number][] = [
  ['', undefined, 1],
  ['optimizer_', 'optimizer', 2],
  ['target_', 'target', 2],
];

function family(
  backend: string,
  stem: string,
  entries: Record<string, Setting | 'special' | { secret: string } | { unsupported: string }>,
  prefixed = true,
): void {
  for (const [prefix, role, rank] of prefixed ? PREFIXES : PREFIXES.slice(0, 1)) {
    for (const [leaf, entry] of Object.entries(entries)) {
      const key = `${prefix}${stem}${leaf}`;
      const name = `${stem}${leaf}`;
      if (entry === 'special') ORIGINAL_MODEL_KEYS[key] = { kind: 'special', backends: [backend], role, name, rank };
      else if ('secret' in entry)
        ORIGINAL_MODEL_KEYS[key] = {
          kind: 'secret',
          variable: `${role ? `${role.toUpperCase()}_` : ''}${entry.secret}`,
        };
      else if ('unsupported' in entry)
        ORIGINAL_MODEL_KEYS[key] = { kind: 'unsupported', feature: entry.unsupported, backends: [backend] };
      else ORIGINAL_MODEL_KEYS[key] = { kind: 'setting', backends: [backend], role, setting: entry, name, rank };
    }
  }
}

export const MANAGED_IDENTITY =
  'Azure managed-identity authentication is not built yet; ignored (Azure OpenAI authenticates with AZURE_OPENAI_API_KEY, a token in AZURE_OPENAI_AD_TOKEN, or the Azure CLI)';
family('openai_chat', 'azure_openai_', {
  endpoint: 'special',
  api_version: { field: 'options.api_version', read: text },
  api_key: { secret: 'AZURE_OPENAI_API_KEY' },
  auth_mode: 'special',
  ad_scope: { field: 'options.ad_scope', read: text },
  managed_identity_client_id: { unsupported: MANAGED_IDENTITY },
});
// The original's older spelling, used when the azure_openai_* key is blank.
for (const [leaf, entry] of Object.entries({
  endpoint: 'special',
  api_version: { field: 'options.api_version', read: text },
} as const)) {
  ORIGINAL_MODEL_KEYS[`azure_${leaf}`] =
    entry === 'special'
      ? { kind: 'special', backends: ['openai_chat'], name: `azure_openai_${leaf}`, rank: 0 }
      : { kind: 'setting', backends: ['openai_chat'], setting: entry, name: `azure_openai_${leaf}`, rank: 0 };
}
ORIGINAL_MODEL_KEYS.azure_api_key = { kind: 'secret', variable: 'AZURE_OPENAI_API_KEY' };

family('qwen_chat', 'qwen_chat_', {
  base_url: { field: 'base_url', read: text },
  api_key: { secret: 'QWEN_CHAT_API_KEY' },
  temperature: { field: 'temperature', read: temperature },
  timeout_seconds: { field: 'timeout_s', read: number },
  max_tokens: { unsupported: CAP },
  enable_thinking: 'special',
  thinking_mode: 'special',
});

// MiniMax: the original reads only the shared keys; the role-prefixed ones it lists are honoured here.
family('minimax_chat', 'minimax_', {
  base_url: { field: 'base_url', read: text },
  api_key: { secret: 'MINIMAX_API_KEY' },
});
family(
  'minimax_chat',
  'minimax_',
  {
    region: { field: 'options.region', read: text },
    model: 'special',
    temperature: { field: 'temperature', read: temperature },
    max_tokens: { unsupported: CAP },
    enable_thinking: { field: 'options.enable_thinking', read: bool },
  },
  false,
);

// The agent CLIs. Keys of the original's Codex settings serve both Codex backends (its `codex`
// label runs codex_exec in both roles); its Copilot path and home serve both Copilot backends.
const CODEX = ['codex_exec', 'codex'];
const COPILOT = ['copilot_exec', 'copilot_chat'];
const agentKey = (key: string, backends: string[], entry: Setting | 'special', rank = 1, name = key) => {
  ORIGINAL_MODEL_KEYS[key] =
    entry === 'special'
      ? { kind: 'special', backends, name, rank }
      : { kind: 'setting', backends, setting: entry, name, rank };
};
const cliPath: Setting = { field: 'options.path', read: text };
// The path and sandbox keys and their aliases, the canonical spelling first, as the original ranks them.
for (const [i, key] of ['codex_exec_path', 'codex_path', 'codex_cli_bin', 'codex_bin'].entries())
  agentKey(key, CODEX, cliPath, 4 - i, 'codex_exec_path');
for (const [i, key] of ['codex_exec_sandbox', 'sandbox', 'codex_sandbox'].entries())
  agentKey(key, CODEX, 'special', 3 - i, 'codex_exec_sandbox');
agentKey('codex_exec_reasoning_effort', CODEX, { field: 'reasoning_effort', read: effort });
agentKey('codex_exec_web_search', CODEX, {
  field: 'options.config.web_search',
  read: (v, where) => (bool(v, where) ? 'live' : 'disabled'),
});
for (const key of ['codex_exec_use_sdk', 'codex_exec_network_access', 'codex_exec_approval_policy'])
  agentKey(key, CODEX, 'special');
const NO_PROFILE =
  "a profile of the user's Codex config.toml is not read: each run has a fresh CODEX_HOME; set what it holds in model.<role>.options.config, or use options.home: user with options.extra_args: [--profile, NAME]";
ORIGINAL_MODEL_KEYS.codex_exec_profile = { kind: 'unsupported', feature: NO_PROFILE, backends: CODEX };
ORIGINAL_MODEL_KEYS.codex_exec_full_auto = {
  kind: 'unsupported',
  feature: 'codex_exec_full_auto is deprecated (the original ignores it too); ignored',
  backends: CODEX,
};
ORIGINAL_MODEL_KEYS.codex_trace_to_optimizer = { kind: 'model', field: 'trace_to_optimizer', read: bool };

agentKey('claude_code_exec_path', ['claude_code_exec'], cliPath);
agentKey('claude_code_exec_effort', ['claude_code_exec'], { field: 'reasoning_effort', read: effort });
agentKey('claude_code_exec_max_thinking_tokens', ['claude_code_exec'], {
  field: 'options.env.MAX_THINKING_TOKENS',
  read: (v, where) => String(positiveInteger(v, where)),
});
agentKey('claude_code_exec_use_sdk', ['claude_code_exec'], 'special');
ORIGINAL_MODEL_KEYS.claude_code_exec_profile = {
  kind: 'unsupported',
  feature:
    'a Claude Code profile is not supported; ignored (settings go in model.<role>.options: env, tools, extra_args)',
  backends: ['claude_code_exec'],
};

agentKey('cursor_exec_path', ['cursor_exec'], cliPath);
agentKey('cursor_exec_sandbox', ['cursor_exec'], 'special');

agentKey('copilot_exec_path', COPILOT, cliPath);
agentKey('copilot_exec_home', COPILOT, { field: 'options.home', read: text });
agentKey('copilot_exec_allow_all_tools', ['copilot_exec'], 'special');
agentKey('copilot_chat_timeout', ['copilot_chat'], {
  field: 'timeout_s',
  read: (v, where) => positiveInteger(v, where),
});
ORIGINAL_MODEL_KEYS.copilot_chat_optimizer_model = {
  kind: 'special',
  backends: ['copilot_chat'],
  role: 'optimizer',
  name: 'copilot_chat_model',
  rank: 1,
};
ORIGINAL_MODEL_KEYS.copilot_chat_target_model = {
  kind: 'special',
  backends: ['copilot_chat'],
  role: 'target',
  name: 'copilot_chat_model',
  rank: 1,
};

/** The original's `human_feedback` section (a human review of each gate decision). */
export const HUMAN_FEEDBACK_KEYS = ['enabled', 'timeout_seconds', 'on_timeout', 'max_retries_per_step'];
export const HUMAN_FEEDBACK =
  'human review of the gate decisions is not built yet; ignored (the validation gate decides alone)';

/** Where a flat key of the original's backend settings lives in the structured form. */
export function originalFlatPath(key: string): string | undefined {
  if (ORIGINAL_MODEL_KEYS[key]) return `model.${key}`;
  const leaf = key.startsWith('human_feedback_') ? key.slice('human_feedback_'.length) : undefined;
  return leaf && HUMAN_FEEDBACK_KEYS.includes(leaf) ? `human_feedback.${leaf}` : undefined;
}

/** One original key found in a config, with where it came from. */
export interface FoundKey {
  /** `model.<key>` or `human_feedback.<key>`. */
  path: string;
  key: string;
  value: unknown;
  source: string;
  written: string;
}
