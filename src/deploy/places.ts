/**
 * Where each agent reads skills: a project's skill folder (the one its harness installs into in a
 * rollout's workspace) or the user's own, as each agent documents them. `agents` is the shared
 * folder of the Agent Skills standard, read by Codex, Copilot, Cursor and others.
 */
import os from 'node:os';
import path from 'node:path';
import { AGENT_LAYOUTS } from '../model/harness/skill-install.ts';
import type { DeployAgent, Scope } from './agents.ts';

const PROJECT: Record<DeployAgent, string> = {
  claude: AGENT_LAYOUTS['claude-code'].skillsDir,
  codex: AGENT_LAYOUTS.codex.skillsDir,
  copilot: AGENT_LAYOUTS.copilot.skillsDir,
  cursor: AGENT_LAYOUTS.cursor.skillsDir,
  agents: '.agents/skills',
};

/** The user's skill folder of each agent: its home (moved by its own variable, where it has one), then `skills`. */
function userSkills(agent: DeployAgent, env: Record<string, string | undefined>): string {
  const home = env.HOME || os.homedir();
  switch (agent) {
    case 'claude':
      return path.join(env.CLAUDE_CONFIG_DIR || path.join(home, '.claude'), 'skills');
    case 'codex':
      return path.join(env.CODEX_HOME || path.join(home, '.codex'), 'skills');
    case 'copilot':
      return path.join(env.COPILOT_HOME || path.join(home, '.copilot'), 'skills');
    case 'cursor':
      return path.join(home, '.cursor', 'skills');
    case 'agents':
      return path.join(home, '.agents', 'skills');
  }
}

/** The folder that holds the agent's skills (one sub-folder per skill) for this scope. */
export function skillsFolder(
  agent: DeployAgent,
  scope: Scope,
  env: Record<string, string | undefined> = process.env,
): string {
  return 'user' in scope ? userSkills(agent, env) : path.resolve(scope.project, PROJECT[agent]);
}
