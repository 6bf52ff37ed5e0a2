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
  /** Honoured for roles on `backend`; `role` is set for the role-prefixed spelling. */
  | { kind: 'setting'; backend: string; role?: RoleName; setting: Setting; name: string; rank: number }
  /** Applied by a function of its own (see `applySpecial`). */
  | { kind: 'special'; backend: string; role?: RoleName; name: string; rank: number }
  /** A key that would hold a secret: never kept; the warning names the variable. */
  | { kind: 'secret'; backend: string; role?: RoleName; variable: string }
  /** Accepted and ignored, with the reason. */
  | { kind: 'unsupported'; feature: string; backend?: string };

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
/** The original's Qwen and MiniMax temperature: "", none, off or null leave it to the server. */
const temperature = (value: unknown, where: string): number | undefined =>
  typeof value === 'string' && ['none', 'off', 'null'].includes(value.trim().toLowerCase()) ? undefined : number(value, where);

const HARNESS = (name: string, what: string) => `the ${name} backend (${what}) is not built yet; ignored`;
const CAP = 'a per-backend cap on output tokens is not supported; ignored (model.<role>.max_output_tokens sets the output size)';

/** Every key of the original's `model` section that our schema does not have, with its rule. */
export const ORIGINAL_MODEL_KEYS: Record<string, Rule> = {};
const PREFIXES: [string, RoleName | undefined, number][] = [
  ['', undefined, 1],
  ['optimizer_', 'optimizer', 2],
  ['target_', 'target', 2],
];

function family(backend: string, stem: string, entries: Record<string, Setting | 'special' | { secret: string } | { unsupported: string }>, prefixed = true): void {
  for (const [prefix, role, rank] of prefixed ? PREFIXES : PREFIXES.slice(0, 1)) {
    for (const [leaf, entry] of Object.entries(entries)) {
      const key = `${prefix}${stem}${leaf}`;
      const name = `${stem}${leaf}`;
      if (entry === 'special') ORIGINAL_MODEL_KEYS[key] = { kind: 'special', backend, role, name, rank };
      else if ('secret' in entry) ORIGINAL_MODEL_KEYS[key] = { kind: 'secret', backend, role, variable: `${role ? `${role.toUpperCase()}_` : ''}${entry.secret}` };
      else if ('unsupported' in entry) ORIGINAL_MODEL_KEYS[key] = { kind: 'unsupported', feature: entry.unsupported, backend };
      else ORIGINAL_MODEL_KEYS[key] = { kind: 'setting', backend, role, setting: entry, name, rank };
    }
  }
}

const MANAGED_IDENTITY = 'Azure managed-identity authentication is not built yet; ignored (Azure OpenAI authenticates with AZURE_OPENAI_API_KEY, a token in AZURE_OPENAI_AD_TOKEN, or the Azure CLI)';
family('openai_chat', 'azure_openai_', {
  endpoint: 'special',
  api_version: { field: 'options.api_version', read: text },
  api_key: { secret: 'AZURE_OPENAI_API_KEY' },
  auth_mode: 'special',
  ad_scope: { field: 'options.ad_scope', read: text },
  managed_identity_client_id: { unsupported: MANAGED_IDENTITY },
});
// The original's older spelling, used when the azure_openai_* key is blank.
for (const [leaf, entry] of Object.entries({ endpoint: 'special', api_version: { field: 'options.api_version', read: text } } as const)) {
  ORIGINAL_MODEL_KEYS[`azure_${leaf}`] =
    entry === 'special' ? { kind: 'special', backend: 'openai_chat', name: `azure_openai_${leaf}`, rank: 0 } : { kind: 'setting', backend: 'openai_chat', setting: entry, name: `azure_openai_${leaf}`, rank: 0 };
}
ORIGINAL_MODEL_KEYS.azure_api_key = { kind: 'secret', backend: 'openai_chat', variable: 'AZURE_OPENAI_API_KEY' };

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
family('minimax_chat', 'minimax_', { base_url: { field: 'base_url', read: text }, api_key: { secret: 'MINIMAX_API_KEY' } });
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

const CODEX = HARNESS('codex_exec', 'the Codex CLI as the target agent');
for (const key of [
  'codex_exec_path',
  'codex_exec_sandbox',
  'codex_exec_profile',
  'codex_exec_full_auto',
  'codex_exec_reasoning_effort',
  'codex_exec_use_sdk',
  'codex_exec_network_access',
  'codex_exec_web_search',
  'codex_exec_approval_policy',
  'codex_trace_to_optimizer',
  // The original's aliases of codex_exec_path and codex_exec_sandbox.
  'codex_path',
  'codex_cli_bin',
  'codex_bin',
  'sandbox',
  'codex_sandbox',
]) {
  ORIGINAL_MODEL_KEYS[key] = { kind: 'unsupported', feature: CODEX };
}
for (const leaf of ['path', 'profile', 'use_sdk', 'effort', 'max_thinking_tokens']) {
  ORIGINAL_MODEL_KEYS[`claude_code_exec_${leaf}`] = { kind: 'unsupported', feature: HARNESS('claude_code_exec', 'Claude Code as the target agent') };
}
for (const leaf of ['path', 'sandbox']) {
  ORIGINAL_MODEL_KEYS[`cursor_exec_${leaf}`] = { kind: 'unsupported', feature: HARNESS('cursor_exec', 'the Cursor agent CLI as the target agent') };
}
const COPILOT = 'the GitHub Copilot CLI backends (copilot_chat, copilot_exec) are not built yet; ignored';
for (const key of ['copilot_exec_path', 'copilot_exec_home', 'copilot_exec_allow_all_tools', 'copilot_chat_optimizer_model', 'copilot_chat_target_model', 'copilot_chat_timeout']) {
  ORIGINAL_MODEL_KEYS[key] = { kind: 'unsupported', feature: COPILOT };
}

/** The original's `human_feedback` section (a human review of each gate decision). */
export const HUMAN_FEEDBACK_KEYS = ['enabled', 'timeout_seconds', 'on_timeout', 'max_retries_per_step'];
const HUMAN_FEEDBACK = 'human review of the gate decisions is not built yet; ignored (the validation gate decides alone)';

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
export function extractOriginalKeys(tree: Tree, sources: Sources, suggest: (word: string, known: string[]) => string): FoundKey[] {
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
      throw new ConfigError(`${s?.source ?? 'config'}: human_feedback: expected a mapping of ${HUMAN_FEEDBACK_KEYS.join(', ')}`, s?.source, 'human_feedback');
    }
    for (const key of Object.keys(hf)) {
      if (!HUMAN_FEEDBACK_KEYS.includes(key)) {
        const s = sources.get(`human_feedback.${key}`);
        throw new ConfigError(`${s?.source ?? 'config'}: unknown key '${s?.written ?? `human_feedback.${key}`}'${suggest(key, HUMAN_FEEDBACK_KEYS)}`, s?.source, `human_feedback.${key}`);
      }
      take('human_feedback', key, hf);
    }
    delete tree.human_feedback;
  }
  return found;
}

/** Sets a dotted field of a role, recording where its value came from. */
function setRoleField(config: Config, sources: Sources, role: RoleName, field: string, value: unknown, from: FoundKey): void {
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

/**
 * Applies the keys `extractOriginalKeys` found: role settings for the roles on their backend
 * (after role resolution), warnings for the rest. `defaulted` names the roles whose model was
 * left to the backend's default (the original's `minimax_model` fills those).
 */
export function applyOriginalKeys(config: Config, found: FoundKey[], sources: Sources, defaulted: ReadonlySet<RoleName>): string[] {
  const warnings: string[] = [];
  const unsupported = new Map<string, FoundKey[]>();
  const note = (message: string, key: FoundKey) => unsupported.set(message, [...(unsupported.get(message) ?? []), key]);
  const rolesOn = (backend: string) => ROLE_NAMES.filter((r) => config.model[r].backend === backend);

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
      if (!rule.backend || rolesOn(rule.backend).length > 0) note(rule.feature, f);
    }
  }

  // Settings: for each role on the backend, the most specific non-blank key wins.
  for (const role of ROLE_NAMES) {
    const backend = config.model[role].backend;
    const chosen = new Map<string, { rule: Extract<Rule, { kind: 'setting' | 'special' }>; key: FoundKey }>();
    for (const f of found) {
      const rule = ORIGINAL_MODEL_KEYS[f.key];
      if (!rule || (rule.kind !== 'setting' && rule.kind !== 'special') || rule.backend !== backend || blank(f.value)) continue;
      if (rule.role && rule.role !== role) continue;
      const current = chosen.get(rule.name);
      if (!current || rule.rank > current.rule.rank) chosen.set(rule.name, { rule, key: f });
    }
    for (const [name, { rule, key }] of chosen) {
      const where = `${key.source}: ${key.written}`;
      if (rule.kind === 'setting') {
        if (!setByUser(config, sources, role, rule.setting.field)) setRoleField(config, sources, role, rule.setting.field, rule.setting.read(key.value, where), key);
        continue;
      }
      applySpecial(config, sources, role, name, key, (other) => chosen.get(other)?.key, defaulted, note);
    }
  }

  for (const [message, keys] of unsupported) {
    const bySource = new Map<string, string[]>();
    for (const k of keys) bySource.set(k.source, [...(bySource.get(k.source) ?? []), k.written]);
    for (const [source, written] of bySource) warnings.push(`${source}: ${written.join(', ')}: ${message}`);
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
      if (!setByUser(config, sources, role, 'options.provider')) setRoleField(config, sources, role, 'options.provider', 'azure', key);
      return;
    case 'azure_openai_auth_mode': {
      const mode = text(key.value, where).toLowerCase();
      if (['api_key', 'key'].includes(mode)) {
        if (!setByUser(config, sources, role, 'options.auth')) setRoleField(config, sources, role, 'options.auth', 'api_key', key);
      } else if (mode === 'azure_cli') {
        if (!setByUser(config, sources, role, 'options.auth')) setRoleField(config, sources, role, 'options.auth', 'azure_cli', key);
      } else if (['openai_compatible', 'compat', 'openai'].includes(mode)) {
        // The endpoint is a plain OpenAI-style server, not an Azure resource.
        setRoleField(config, sources, role, 'options.provider', 'openai', key);
      } else if (['managed_identity', 'aad', 'azure_ad'].includes(mode)) {
        note(MANAGED_IDENTITY, key);
      } else {
        throw new ConfigError(`${where}: unknown Azure auth mode '${mode}' (expected api_key, azure_cli, managed_identity or openai_compatible)`, key.source, key.path);
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
        throw new ConfigError(`${modeKey!.source}: ${modeKey!.written}: expected one of ${QWEN_MODES.join(', ')}, got ${JSON.stringify(modeKey!.value)}`, modeKey!.source, modeKey!.path);
      }
      // The original's older switch: true means enabled; false leaves it to the server.
      const legacy = legacyKey ? (bool(legacyKey.value, `${legacyKey.source}: ${legacyKey.written}`) ? 'enabled' : 'server_default') : undefined;
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
      if (defaulted.has(role)) rc.model = text(key.value, where);
      return;
  }
}
