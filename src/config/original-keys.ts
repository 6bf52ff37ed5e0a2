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
 */
import { ConfigError } from '../errors.ts';
import { getPath, isMapping, type Sources, type Tree } from './tree.ts';
import type { Config, RoleConfig } from './schema.ts';

type RoleName = 'target' | 'optimizer';
const ROLE_NAMES: RoleName[] = ['target', 'optimizer'];

/** A role setting a key maps onto: where it goes and how the value is read. */
interface Setting {
  /** Dotted path inside the role (`base_url`, `options.thinking_mode`, …). */
  field: string;
  read: (value: unknown, where: string) => unknown;
}

type Rule =
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

const text = (value: unknown, where: string): string => {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number') return String(value);
  throw new ConfigError(`${where}: expected a string, got ${JSON.stringify(value)}`);
};
const number = (value: unknown, where: string): number => {
  const n = typeof value === 'number' ? value : Number(String(value).trim());
  if (!Number.isFinite(n)) throw new ConfigError(`${where}: expected a number, got ${JSON.stringify(value)}`);
  return n;
};
const bool = (value: unknown, where: string): boolean => {
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

const MANAGED_IDENTITY =
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
const HUMAN_FEEDBACK =
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

const blank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/**
 * Takes the original's backend keys out of `tree` (so that validation sees only our schema),
 * returning them. A key of `human_feedback` that the original does not have is an error.
 */
export function extractOriginalKeys(
  tree: Tree,
  sources: Sources,
  suggest: (word: string, known: string[]) => string,
): FoundKey[] {
  const found: FoundKey[] = [];
  const take = (section: string, key: string, container: Tree) => {
    const path = `${section}.${key}`;
    const s = sources.get(path);
    found.push({ path, key, value: container[key], source: s?.source ?? 'config', written: s?.written ?? path });
    delete container[key];
    sources.delete(path);
  };
  const model = tree.model;
  if (isMapping(model)) for (const key of Object.keys(model)) if (ORIGINAL_MODEL_KEYS[key]) take('model', key, model);
  const hf = tree.human_feedback;
  if (hf !== undefined) {
    if (!isMapping(hf)) {
      const s = sources.get('human_feedback');
      throw new ConfigError(
        `${s?.source ?? 'config'}: human_feedback: expected a mapping of ${HUMAN_FEEDBACK_KEYS.join(', ')}`,
        s?.source,
        'human_feedback',
      );
    }
    for (const key of Object.keys(hf)) {
      if (!HUMAN_FEEDBACK_KEYS.includes(key)) {
        const s = sources.get(`human_feedback.${key}`);
        throw new ConfigError(
          `${s?.source ?? 'config'}: unknown key '${s?.written ?? `human_feedback.${key}`}'${suggest(key, HUMAN_FEEDBACK_KEYS)}`,
          s?.source,
          `human_feedback.${key}`,
        );
      }
      take('human_feedback', key, hf);
    }
    delete tree.human_feedback;
  }
  return found;
}

/** Sets a dotted field of a role, recording where its value came from. */
function setRoleField(
  config: Config,
  sources: Sources,
  role: RoleName,
  field: string,
  value: unknown,
  from: FoundKey,
): void {
  const rc = config.model[role] as unknown as Tree;
  const parts = field.split('.');
  let node = rc;
  for (const part of parts.slice(0, -1)) {
    if (!isMapping(node[part])) node[part] = {};
    node = node[part] as Tree;
  }
  if (value === undefined) delete node[parts.at(-1)!];
  else node[parts.at(-1)!] = value;
  sources.set(`model.${role}.${field}`, { source: from.source, written: from.written });
}

/** Whether the user set a role field themselves (then it wins over the original's keys). */
function setByUser(config: Config, sources: Sources, role: RoleName, field: string): boolean {
  if (sources.has(`model.${role}.${field}`)) return true;
  // `options` fields have no defaults before the backend's schema fills them: present means set.
  return field.startsWith('options.') && getPath(config.model[role] as unknown as Tree, field) !== undefined;
}

const QWEN_MODES = ['server_default', 'enabled', 'disabled'];
const NO_FULL_ACCESS =
  'danger-full-access is not supported; ignored (the agent stays in its sandbox, confined to its workspace; workspace-write lets it write there)';
const NO_SDK = 'the agent SDKs are not used (skillopt runs the CLI); ignored';

/**
 * Applies the keys `extractOriginalKeys` found: role settings for the roles on their backend
 * (after role resolution), warnings for the rest. `defaulted` names the roles whose model was
 * left to the backend's default (the original's `minimax_model` fills those).
 */
export function applyOriginalKeys(
  config: Config,
  found: FoundKey[],
  sources: Sources,
  defaulted: ReadonlySet<RoleName>,
): string[] {
  const warnings: string[] = [];
  const unsupported = new Map<string, FoundKey[]>();
  const note = (message: string, key: FoundKey) => unsupported.set(message, [...(unsupported.get(message) ?? []), key]);
  const rolesOn = (backends: string[]) => ROLE_NAMES.filter((r) => backends.includes(config.model[r].backend));

  for (const f of found) {
    if (blank(f.value)) continue;
    if (f.path.startsWith('human_feedback.')) {
      if (f.key === 'enabled' && bool(f.value, `${f.source}: ${f.written}`)) note(HUMAN_FEEDBACK, f);
      continue;
    }
    const rule = ORIGINAL_MODEL_KEYS[f.key]!;
    if (rule.kind === 'secret') {
      warnings.push(
        `${f.source}: ${f.written}: keys are read from environment variables only, never from config files; set ${rule.variable} in the shell or in .env (the value here is ignored and not written anywhere)`,
      );
    } else if (rule.kind === 'unsupported') {
      if (!rule.backends || rolesOn(rule.backends).length > 0) note(rule.feature, f);
    } else if (rule.kind === 'model') {
      if (!sources.has(`model.${rule.field}`)) {
        config.model[rule.field] = rule.read(f.value, `${f.source}: ${f.written}`) as boolean;
        sources.set(`model.${rule.field}`, { source: f.source, written: f.written });
      }
    }
  }

  // Settings: for each role on the backend, the most specific non-blank key wins.
  for (const role of ROLE_NAMES) {
    const backend = config.model[role].backend;
    const chosen = new Map<string, { rule: Extract<Rule, { kind: 'setting' | 'special' }>; key: FoundKey }>();
    for (const f of found) {
      const rule = ORIGINAL_MODEL_KEYS[f.key];
      if (
        !rule ||
        (rule.kind !== 'setting' && rule.kind !== 'special') ||
        !rule.backends.includes(backend) ||
        blank(f.value)
      )
        continue;
      if (rule.role && rule.role !== role) continue;
      const current = chosen.get(rule.name);
      if (!current || rule.rank > current.rule.rank) chosen.set(rule.name, { rule, key: f });
    }
    for (const [name, { rule, key }] of chosen) {
      const where = `${key.source}: ${key.written}`;
      if (rule.kind === 'setting') {
        if (!setByUser(config, sources, role, rule.setting.field))
          setRoleField(config, sources, role, rule.setting.field, rule.setting.read(key.value, where), key);
        continue;
      }
      applySpecial(config, sources, role, name, key, (other) => chosen.get(other)?.key, defaulted, note);
    }
  }

  for (const [message, keys] of unsupported) {
    // A key noted for each of two roles on its backend is named once.
    const bySource = new Map<string, Set<string>>();
    for (const k of keys) bySource.set(k.source, (bySource.get(k.source) ?? new Set()).add(k.written));
    for (const [source, written] of bySource) warnings.push(`${source}: ${[...written].join(', ')}: ${message}`);
  }
  return warnings;
}

/** Keys whose mapping is more than a copy; `chosen` gives the key chosen for another name. */
function applySpecial(
  config: Config,
  sources: Sources,
  role: RoleName,
  name: string,
  key: FoundKey,
  chosen: (name: string) => FoundKey | undefined,
  defaulted: ReadonlySet<RoleName>,
  note: (message: string, key: FoundKey) => void,
): void {
  const where = `${key.source}: ${key.written}`;
  const rc: RoleConfig = config.model[role];
  switch (name) {
    case 'azure_openai_endpoint':
      if (setByUser(config, sources, role, 'base_url')) return;
      setRoleField(config, sources, role, 'base_url', text(key.value, where), key);
      // An endpoint named by the Azure keys is an Azure resource, whatever its host name.
      if (!setByUser(config, sources, role, 'options.provider'))
        setRoleField(config, sources, role, 'options.provider', 'azure', key);
      return;
    case 'azure_openai_auth_mode': {
      const mode = text(key.value, where).toLowerCase();
      if (['api_key', 'key'].includes(mode)) {
        if (!setByUser(config, sources, role, 'options.auth'))
          setRoleField(config, sources, role, 'options.auth', 'api_key', key);
      } else if (mode === 'azure_cli') {
        if (!setByUser(config, sources, role, 'options.auth'))
          setRoleField(config, sources, role, 'options.auth', 'azure_cli', key);
      } else if (['openai_compatible', 'compat', 'openai'].includes(mode)) {
        // The endpoint is a plain OpenAI-style server, not an Azure resource.
        setRoleField(config, sources, role, 'options.provider', 'openai', key);
      } else if (['managed_identity', 'aad', 'azure_ad'].includes(mode)) {
        note(MANAGED_IDENTITY, key);
      } else {
        throw new ConfigError(
          `${where}: unknown Azure auth mode '${mode}' (expected api_key, azure_cli, managed_identity or openai_compatible)`,
          key.source,
          key.path,
        );
      }
      return;
    }
    case 'qwen_chat_thinking_mode':
    case 'qwen_chat_enable_thinking': {
      if (setByUser(config, sources, role, 'options.thinking_mode')) return;
      const modeKey = chosen('qwen_chat_thinking_mode');
      const legacyKey = chosen('qwen_chat_enable_thinking');
      const mode = modeKey ? text(modeKey.value, `${modeKey.source}: ${modeKey.written}`).toLowerCase() : undefined;
      if (mode !== undefined && !QWEN_MODES.includes(mode)) {
        throw new ConfigError(
          `${modeKey!.source}: ${modeKey!.written}: expected one of ${QWEN_MODES.join(', ')}, got ${JSON.stringify(modeKey!.value)}`,
          modeKey!.source,
          modeKey!.path,
        );
      }
      // The original's older switch: true means enabled; false leaves it to the server.
      const legacy = legacyKey
        ? bool(legacyKey.value, `${legacyKey.source}: ${legacyKey.written}`)
          ? 'enabled'
          : 'server_default'
        : undefined;
      if (mode !== undefined && legacy !== undefined && mode !== legacy) {
        throw new ConfigError(
          `${modeKey!.source}: ${modeKey!.written} is '${mode}' but ${legacyKey!.written} (${legacyKey!.source}) says '${legacy}'; keep one of them`,
          modeKey!.source,
          modeKey!.path,
        );
      }
      setRoleField(config, sources, role, 'options.thinking_mode', mode ?? legacy, modeKey ?? key);
      return;
    }
    case 'minimax_model':
    case 'copilot_chat_model':
      if (defaulted.has(role)) rc.model = text(key.value, where);
      return;
    case 'codex_exec_sandbox': {
      const mode = text(key.value, where).toLowerCase();
      if (!['read-only', 'workspace-write', 'danger-full-access'].includes(mode)) {
        throw new ConfigError(
          `${where}: expected read-only, workspace-write or danger-full-access, got ${JSON.stringify(key.value)}`,
          key.source,
          key.path,
        );
      }
      if (mode === 'danger-full-access') note(NO_FULL_ACCESS, key);
      else if (!setByUser(config, sources, role, 'options.allow_writes'))
        setRoleField(config, sources, role, 'options.allow_writes', mode === 'workspace-write', key);
      return;
    }
    case 'codex_exec_use_sdk':
    case 'claude_code_exec_use_sdk':
      // auto and cli run the CLI, as skillopt does; only a demand for the SDK goes unmet.
      if (!['auto', 'cli', 'false', 'no', 'off', '0'].includes(text(key.value, where).toLowerCase())) note(NO_SDK, key);
      return;
    case 'codex_exec_network_access':
      if (bool(key.value, where))
        note(
          "network access for the agent's commands is not supported; ignored (Codex runs them without network)",
          key,
        );
      return;
    case 'codex_exec_approval_policy':
      if (text(key.value, where).toLowerCase() !== 'never')
        note(
          'an approval policy other than never is not supported; ignored (nobody is there to approve, so the agent runs with approval_policy never)',
          key,
        );
      return;
    case 'cursor_exec_sandbox':
      if (text(key.value, where).toLowerCase() !== 'enabled') note("Cursor's sandbox stays enabled; ignored", key);
      return;
    case 'copilot_exec_allow_all_tools':
      if (bool(key.value, where))
        note(
          'allowing all tools is not supported; ignored (options.allow_writes lets the agent write in its workspace)',
          key,
        );
      return;
  }
}
