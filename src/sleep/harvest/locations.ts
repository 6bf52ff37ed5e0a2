/**
 * Where each agent keeps its sessions: the config's paths when set, else the agents' own
 * variables (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `COPILOT_HOME`, `OPENCODE_DB`,
 * `PI_CODING_AGENT_DIR`, `XDG_DATA_HOME`, `XDG_CONFIG_HOME`, `VSCODE_PORTABLE`), else each
 * agent's default folder on this platform.
 */
import os from 'node:os';
import path from 'node:path';
import { expandHome, type HarvestConfig } from '../config.ts';
import { defaultDevinTranscripts } from './devin.ts';
import type { Locations } from './source.ts';
import { defaultVscodeStorage } from './vscode-copilot.ts';

function openCodeData(environment: Record<string, string | undefined>, platform: string, home: string): string {
  if (environment.XDG_DATA_HOME) return path.join(environment.XDG_DATA_HOME, 'opencode');
  if (platform === 'win32')
    return path.join(environment.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'), 'opencode');
  return path.join(home, '.local', 'share', 'opencode');
}

export function resolveLocations(
  h: HarvestConfig,
  environment: Record<string, string | undefined> = process.env,
  platform = process.platform,
  home = os.homedir(),
): Locations {
  const at = (configured: string, fallback: string) => path.resolve(expandHome(configured || fallback, home));
  const copilotHome = at(h.copilot_home, environment.COPILOT_HOME || path.join(home, '.copilot'));
  const opencodeData = at(h.opencode_data, openCodeData(environment, platform, home));
  const envDb = environment.OPENCODE_DB;
  const opencodeDb = h.opencode_db
    ? at(h.opencode_db, '')
    : envDb === ':memory:'
      ? ''
      : envDb
        ? path.resolve(opencodeData, expandHome(envDb, home))
        : path.join(opencodeData, 'opencode.db');
  const storage =
    typeof h.vscode_workspace_storage === 'string'
      ? h.vscode_workspace_storage
        ? [h.vscode_workspace_storage]
        : []
      : h.vscode_workspace_storage;
  return {
    claudeHome: at(h.claude_home, environment.CLAUDE_CONFIG_DIR || path.join(home, '.claude')),
    codexHome: at(h.codex_home, environment.CODEX_HOME || path.join(home, '.codex')),
    copilotHome,
    copilotStore: at(h.copilot_cli_session_store, path.join(copilotHome, 'session-store.db')),
    vscodeStorage: (storage.length ? storage : defaultVscodeStorage(environment, platform, home)).map((s) => at(s, '')),
    cursorHome: at(h.cursor_home, path.join(home, '.cursor')),
    opencodeData,
    opencodeDb,
    piSessions: h.pi_home
      ? path.join(at(h.pi_home, ''), 'agent', 'sessions')
      : path.join(at('', environment.PI_CODING_AGENT_DIR || path.join(home, '.pi', 'agent')), 'sessions'),
    devinTranscripts: at(h.devin_transcripts, defaultDevinTranscripts(environment, platform, home)),
    devinWorkspaces: h.devin_workspaces.map((w) => at(w, '')),
  };
}
