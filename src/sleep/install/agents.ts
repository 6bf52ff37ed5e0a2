/**
 * Where each agent reads its MCP servers, and the entry that starts `skillopt mcp` in it:
 * Codex (`config.toml`, `[mcp_servers.<name>]`, plus the skill folder), the Copilot CLI
 * (`~/.copilot/mcp-config.json`, `mcpServers` with `type: local`), VS Code's Copilot (the user's
 * `mcp.json`, `servers` with `type: stdio`, the workspace folder as the project) and Cursor
 * (`~/.cursor/mcp.json`, `mcpServers`).
 */
import os from 'node:os';
import path from 'node:path';

export const AGENTS = ['codex', 'copilot', 'vscode', 'cursor'] as const;
export type Agent = (typeof AGENTS)[number];

export const SERVER_NAME = 'skillopt';

export interface AgentFiles {
  /** The MCP configuration file. */
  config: string;
  format: 'toml' | 'json';
  /** The JSON path of the server entry (JSON files). */
  key?: string[];
  /** A skill folder installed beside it (Codex): the SKILL.md and where it comes from. */
  skill?: { file: string; from: string };
  /** What the agent calls its settings, for messages. */
  label: string;
}

export interface Places {
  home?: string;
  environment?: Record<string, string | undefined>;
  platform?: NodeJS.Platform;
}

const PLUGINS = path.resolve(import.meta.dirname, '../../../plugins');

function vscodeUserDir(home: string, env: Record<string, string | undefined>, platform: NodeJS.Platform): string {
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'Code', 'User');
  if (platform === 'win32') return path.join(env.APPDATA || path.join(home, 'AppData', 'Roaming'), 'Code', 'User');
  return path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'Code', 'User');
}

export function agentFiles(agent: Agent, places: Places = {}): AgentFiles {
  const home = places.home ?? os.homedir();
  const env = places.environment ?? process.env;
  const platform = places.platform ?? process.platform;
  switch (agent) {
    case 'codex':
      return {
        config: path.join(env.CODEX_HOME || path.join(home, '.codex'), 'config.toml'),
        format: 'toml',
        skill: {
          file: path.join(home, '.agents', 'skills', 'skillopt-sleep', 'SKILL.md'),
          from: path.join(PLUGINS, 'codex', 'skills', 'skillopt-sleep', 'SKILL.md'),
        },
        label: 'Codex',
      };
    case 'copilot':
      return {
        config: path.join(env.COPILOT_HOME || path.join(home, '.copilot'), 'mcp-config.json'),
        format: 'json',
        key: ['mcpServers', SERVER_NAME],
        label: 'the Copilot CLI',
      };
    case 'vscode':
      return {
        config: path.join(vscodeUserDir(home, env, platform), 'mcp.json'),
        format: 'json',
        key: ['servers', SERVER_NAME],
        label: 'VS Code',
      };
    case 'cursor':
      return {
        config: path.join(home, '.cursor', 'mcp.json'),
        format: 'json',
        key: ['mcpServers', SERVER_NAME],
        label: 'Cursor',
      };
  }
}

/** The server entry for `agent`: this Node running this CLI's `mcp` command. */
export function serverEntry(agent: Agent, program: { node: string; bin: string }): Record<string, unknown> {
  const args = [program.bin, 'mcp'];
  if (agent === 'copilot') return { type: 'local', command: program.node, args, tools: ['*'] };
  // VS Code starts servers outside the workspace; the project is named with its variable.
  if (agent === 'vscode')
    // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code fills in ${workspaceFolder} itself
    return { type: 'stdio', command: program.node, args: [...args, '--project', '${workspaceFolder}'] };
  return { command: program.node, args };
}
