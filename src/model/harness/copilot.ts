/**
 * GitHub Copilot CLI (`copilot --output-format json`, the prompt on stdin). The skill goes to
 * `.github/skills/<name>/SKILL.md` (or `.github/copilot-instructions.md`). What keeps the agent
 * in its workspace is Copilot's path and tool permissions: file access only under the working
 * directory (`--disallow-temp-dir` removes the temp directory it would otherwise allow, where the
 * other rollouts' workspaces are), no tool that needs approval (nobody is there to give it), no
 * built-in MCP servers, no questions to the user. With `base_url` it runs offline against that
 * endpoint (Copilot's custom-provider mode). The home is a fresh COPILOT_HOME holding a copy of
 * the user's `config.json` (the accounts Copilot remembers, and their token where no system
 * keychain holds it); else the login is COPILOT_GITHUB_TOKEN / GH_TOKEN / GITHUB_TOKEN or `gh`'s.
 */
import os from 'node:os';
import path from 'node:path';
import { CliHarness, type HarnessSettings, type Invocation, type ModeRun } from './cli-harness.ts';
import { CopilotEvents } from './copilot-events.ts';
import type { AgentCli } from './failures.ts';
import { cliHome } from './home.ts';
import { AGENT_LAYOUTS } from './skill-install.ts';
import type { EventReader } from './types.ts';

export const COPILOT_CLI: AgentCli = {
  title: 'GitHub Copilot CLI',
  command: 'copilot',
  install: 'Install it with `npm install -g @github/copilot`',
  optionKey: 'the role option `path`',
  minVersion: '1.0.102',
  testedVersion: '1.0.102',
  login:
    'run `copilot` and use /login, or `gh auth login`, or pass a token with options.pass_env: [COPILOT_GITHUB_TOKEN]',
};

export interface CopilotProvider {
  /** 'openai' (also any OpenAI-compatible server), 'azure' or 'anthropic'. */
  type: string;
  /** 'completions' or 'responses'. */
  wireApi: string;
}

export class CopilotHarness extends CliHarness {
  readonly name = 'copilot';
  readonly cli = COPILOT_CLI;
  readonly layout = AGENT_LAYOUTS.copilot;
  private home?: string;

  constructor(
    settings: HarnessSettings,
    private readonly provider: CopilotProvider = { type: 'openai', wireApi: 'responses' },
  ) {
    super(settings);
  }

  private copilotHome(): string {
    const env = this.settings.environment;
    const userHome = env.COPILOT_HOME || path.join(env.HOME || os.homedir(), '.copilot');
    return (this.home ??= cliHome(this.settings.home, {
      agent: 'copilot',
      userHome,
      link: [],
      copy: ['config.json'],
    }).dir);
  }

  /** Where the usage report of a run goes: beside its workspace, never inside it. */
  static usageFile(workspace: string): string {
    return `${workspace}.usage.json`;
  }

  protected invocation(run: ModeRun, _binary: string): Invocation {
    const s = this.settings;
    const args = [
      '--output-format',
      'json',
      '--no-color',
      '--log-level',
      'none',
      '--no-auto-update',
      '--disable-builtin-mcps',
      '--no-ask-user',
      '--disallow-temp-dir',
      '--usage-output-file',
      CopilotHarness.usageFile(run.workspace),
    ];
    // An empty `--available-tools=` leaves every tool on (1.0.102); a name that matches no tool leaves none.
    if (run.mode === 'chat') args.push('--available-tools=no-tools', '--no-custom-instructions');
    else if (s.allowWrites) args.push('--allow-tool=write');
    if (s.model) args.push('--model', s.model);
    if (s.reasoningEffort) args.push('--reasoning-effort', s.reasoningEffort);
    for (const image of run.images) args.push('--attachment', image);
    args.push(...s.extraArgs);
    const set: Record<string, string> = { COPILOT_HOME: this.copilotHome(), COPILOT_AUTO_UPDATE: 'false' };
    if (s.baseUrl) {
      Object.assign(set, {
        COPILOT_PROVIDER_BASE_URL: s.baseUrl,
        COPILOT_PROVIDER_TYPE: this.provider.type,
        COPILOT_PROVIDER_WIRE_API: this.provider.wireApi,
        COPILOT_OFFLINE: 'true',
      });
      if (s.model) set.COPILOT_MODEL = s.model;
      const key = s.apiKeyEnv ? s.environment[s.apiKeyEnv] : undefined;
      if (key) set.COPILOT_PROVIDER_API_KEY = key;
    }
    return {
      args,
      stdin: run.prompt,
      env: {
        cliNames: ['COPILOT_GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_TOKEN', 'GH_HOST', 'COPILOT_GH_HOST'],
        passNames: s.passEnv,
        set: { ...set, ...s.env },
      },
    };
  }

  protected reader(run: ModeRun): EventReader {
    return new CopilotEvents(this.identity, CopilotHarness.usageFile(run.workspace), run.timeoutMs);
  }
}
