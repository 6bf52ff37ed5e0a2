/**
 * The original's backend keys whose mapping is more than a copy onto a role setting (an Azure
 * endpoint that also makes the role an Azure one, Qwen's two thinking switches, a Codex
 * sandbox, …), and the writing of role fields with the record of where they came from.
 */
import { ConfigError } from '../errors.ts';
import { bool, MANAGED_IDENTITY, text, type FoundKey, type RoleName } from './original-keys.ts';
import type { Config, RoleConfig } from './schema.ts';
import { getPath, isMapping, type Sources, type Tree } from './tree.ts';

/** Sets a dotted field of a role, recording where its value came from. */
export function setRoleField(
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
export function setByUser(config: Config, sources: Sources, role: RoleName, field: string): boolean {
  if (sources.has(`model.${role}.${field}`)) return true;
  // `options` fields have no defaults before the backend's schema fills them: present means set.
  return field.startsWith('options.') && getPath(config.model[role] as unknown as Tree, field) !== undefined;
}

const QWEN_MODES = ['server_default', 'enabled', 'disabled'];
const NO_FULL_ACCESS =
  'danger-full-access is not supported; ignored (the agent stays in its sandbox, confined to its workspace; workspace-write lets it write there)';
const NO_SDK = 'the agent SDKs are not used (skillopt runs the CLI); ignored';

/** Keys whose mapping is more than a copy; `chosen` gives the key chosen for another name. */
export function applySpecial(
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
