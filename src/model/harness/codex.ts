/**
 * Codex (`codex exec --json`). The skill goes to `.agents/skills/<name>/SKILL.md` (or
 * `AGENTS.md`). Commands run in Codex's own sandbox under a permission profile that lets them
 * read only the system's minimal paths, Codex's own binaries and the workspace (writing only
 * there with `allow_writes`), with no network; approvals, web search, plugins, connected apps and
 * browser or computer use are off. The home is a fresh CODEX_HOME with the user's `auth.json`
 * linked in; `CODEX_API_KEY` passes through.
 */
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliHarness, type HarnessSettings, type Invocation, type ModeRun } from './cli-harness.ts';
import { CodexEvents } from './codex-events.ts';
import type { AgentCli } from './failures.ts';
import { cliHome } from './home.ts';
import { AGENT_LAYOUTS } from './skill-install.ts';
import type { EventReader } from './types.ts';

export const CODEX_CLI: AgentCli = {
  title: 'Codex CLI',
  command: 'codex',
  install: 'Install it with `npm install -g @openai/codex`',
  optionKey: 'the role option `path`',
  minVersion: '0.171.0',
  testedVersion: '0.171.0',
  login:
    'run `codex login` (the login is read from $CODEX_HOME/auth.json, default ~/.codex), or pass an API key with options.pass_env: [CODEX_API_KEY]',
};

/** A TOML value from a JSON-like one (JSON strings are valid TOML basic strings). */
export function tomlValue(v: unknown): string {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(', ')}]`;
  if (v && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}=${tomlValue(x)}`)
      .join(', ')}}`;
  throw new Error(`cannot write ${String(v)} as a Codex setting`);
}

const PLATFORM_PACKAGES: Record<string, string> = {
  'linux-x64': 'codex-linux-x64',
  'linux-arm64': 'codex-linux-arm64',
  'darwin-x64': 'codex-darwin-x64',
  'darwin-arm64': 'codex-darwin-arm64',
  'win32-x64': 'codex-win32-x64',
  'win32-arm64': 'codex-win32-arm64',
};

/**
 * Where Codex's native binary and its helpers live, which its sandbox must be able to read (it
 * starts each command through its own binary). For the npm launcher, the platform package's
 * `vendor` folder, found the way the launcher finds it; for a native binary, its folder.
 */
export function codexNativeRoot(binary: string): string {
  const real = fs.realpathSync(binary);
  if (!/\.(c|m)?js$/.test(real)) return path.dirname(real);
  const pkg = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  try {
    if (pkg) return path.join(path.dirname(createRequire(real).resolve(`@openai/${pkg}/package.json`)), 'vendor');
  } catch {
    // an install that keeps the binary inside the launcher's own package
  }
  return path.join(path.dirname(real), '..', 'vendor');
}

export class CodexHarness extends CliHarness {
  readonly name = 'codex';
  readonly cli = CODEX_CLI;
  readonly layout = AGENT_LAYOUTS.codex;
  private home?: string;

  constructor(
    settings: HarnessSettings,
    /** `-c key=value` settings added last (the user's `options.config`). */
    private readonly config: Record<string, unknown> = {},
  ) {
    super(settings);
  }

  private codexHome(): string {
    const env = this.settings.environment;
    const userHome = env.CODEX_HOME || path.join(env.HOME || os.homedir(), '.codex');
    return (this.home ??= cliHome(this.settings.home, { agent: 'codex', userHome, link: ['auth.json'] }).dir);
  }

  protected invocation(run: ModeRun, binary: string): Invocation {
    const s = this.settings;
    const workspaceAccess = run.mode === 'agent' && s.allowWrites ? 'write' : 'read';
    const filesystem = {
      ':minimal': 'read',
      [codexNativeRoot(binary)]: 'read',
      ':workspace_roots': { '.': workspaceAccess },
    };
    const settings: Record<string, unknown> = {
      approval_policy: 'never',
      web_search: 'disabled',
      'analytics.enabled': false,
      check_for_update_on_startup: false,
      // Nothing that reaches past the workspace: plugin sync, connected apps, the browser, the desktop.
      'features.plugins': false,
      'features.remote_plugin': false,
      'features.apps': false,
      'features.browser_use': false,
      'features.computer_use': false,
      default_permissions: 'skillopt',
      'permissions.skillopt.filesystem': filesystem,
      ...(s.reasoningEffort ? { model_reasoning_effort: s.reasoningEffort } : {}),
      ...(s.baseUrl
        ? {
            model_provider: 'skillopt',
            'model_providers.skillopt.name': 'skillopt',
            'model_providers.skillopt.base_url': s.baseUrl,
            'model_providers.skillopt.wire_api': 'responses',
            ...(s.apiKeyEnv ? { 'model_providers.skillopt.env_key': s.apiKeyEnv } : {}),
          }
        : {}),
      ...this.config,
    };
    const args = ['exec', '--json', '--ephemeral', '--skip-git-repo-check', '--color', 'never', '-C', run.workspace];
    if (s.model) args.push('-m', s.model);
    for (const [key, value] of Object.entries(settings)) args.push('-c', `${key}=${tomlValue(value)}`);
    for (const image of run.images) args.push(`--image=${image}`);
    args.push(...s.extraArgs, '-');
    return {
      args,
      stdin: run.prompt,
      env: {
        cliNames: ['CODEX_API_KEY'],
        passNames: [...s.passEnv, ...(s.apiKeyEnv ? [s.apiKeyEnv] : [])],
        set: { CODEX_HOME: this.codexHome(), ...s.env },
      },
    };
  }

  protected reader(run: ModeRun): EventReader {
    return new CodexEvents(this.identity, run.timeoutMs);
  }
}
