/**
 * Claude Code (`claude -p --output-format stream-json --verbose`). The skill goes to
 * `.claude/skills/<name>/SKILL.md` (or `CLAUDE.md`). Claude Code has no OS sandbox here; what
 * keeps the agent in its workspace is its permission checks, in the default mode: reads and
 * read-only commands inside the working directory run, anything outside it or any other command
 * is refused (there is nobody to approve it). The tools are limited to Bash, Read, Glob, Grep and
 * Skill (plus Edit and Write with `allow_writes`); only the workspace's own settings load (no
 * user settings, skills, CLAUDE.md, hooks or MCP servers) and no session is saved. The home is a
 * fresh CLAUDE_CONFIG_DIR with the user's `.credentials.json` linked in; on macOS, where the
 * login is in the Keychain, the user's own config directory is used with the same flags.
 */
import os from 'node:os';
import path from 'node:path';
import { CliHarness, type HarnessSettings, type Invocation, type ModeRun } from './cli-harness.ts';
import { ClaudeCodeEvents } from './claude-code-events.ts';
import type { AgentCli } from './failures.ts';
import { cliHome } from './home.ts';
import { AGENT_LAYOUTS } from './skill-install.ts';
import type { EventReader } from './types.ts';
import { writeInto } from './workspace.ts';

export const CLAUDE_CODE_CLI: AgentCli = {
  title: 'Claude Code CLI',
  command: 'claude',
  install: 'Install it with `npm install -g @anthropic-ai/claude-code`',
  optionKey: 'the role option `path`',
  minVersion: '2.1.197',
  testedVersion: '2.1.197',
  login:
    'run `claude auth login` (the login is read from $CLAUDE_CONFIG_DIR/.credentials.json, default ~/.claude, or the macOS Keychain), or pass a token with options.pass_env: [CLAUDE_CODE_OAUTH_TOKEN] or a key with options.pass_env: [ANTHROPIC_API_KEY]',
};

const EFFORTS: Record<string, string> = {
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'xhigh',
  max: 'max',
};

export class ClaudeCodeHarness extends CliHarness {
  readonly name = 'claude-code';
  readonly cli = CLAUDE_CODE_CLI;
  readonly layout = AGENT_LAYOUTS['claude-code'];
  override readonly takesSystemPrompt = true;
  override readonly reportsCost = true;
  private home?: string;

  constructor(
    settings: HarnessSettings,
    /** Tools the agent may use (`--tools`). */
    private readonly tools: string[] = ['Bash', 'Read', 'Glob', 'Grep', 'Skill'],
  ) {
    super(settings);
  }

  private configDir(): string {
    const env = this.settings.environment;
    const userHome = env.CLAUDE_CONFIG_DIR || path.join(env.HOME || os.homedir(), '.claude');
    const option = this.settings.home || (process.platform === 'darwin' ? 'user' : '');
    return (this.home ??= cliHome(option, { agent: 'claude', userHome, link: ['.credentials.json'] }).dir);
  }

  protected invocation(run: ModeRun, _binary: string): Invocation {
    const s = this.settings;
    const args = [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--no-session-persistence',
      '--strict-mcp-config',
    ];
    if (run.mode === 'agent') {
      const tools = s.allowWrites ? [...this.tools, 'Edit', 'Write'] : this.tools;
      args.push(
        '--setting-sources',
        'project',
        '--permission-mode',
        s.allowWrites ? 'acceptEdits' : 'default',
        `--tools=${tools.join(',')}`,
      );
    } else {
      args.push('--setting-sources=', '--tools=');
      if (run.system) {
        // A file rather than an argument: optimizer prompts can pass the per-argument size limit.
        writeInto(run.workspace, 'system-prompt.md', run.system);
        args.push('--system-prompt-file', path.join(run.workspace, 'system-prompt.md'));
      }
    }
    if (s.model) args.push('--model', s.model);
    const effort = EFFORTS[s.reasoningEffort];
    if (effort) args.push('--effort', effort);
    args.push(...s.extraArgs);
    const set: Record<string, string> = {
      CLAUDE_CONFIG_DIR: this.configDir(),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    };
    if (s.baseUrl) set.ANTHROPIC_BASE_URL = s.baseUrl;
    const key = s.apiKeyEnv ? s.environment[s.apiKeyEnv] : undefined;
    if (key) set.ANTHROPIC_API_KEY = key;
    return {
      args,
      stdin: run.prompt,
      env: {
        cliNames: [
          'CLAUDE_CODE_OAUTH_TOKEN',
          'CLAUDE_CODE_USE_BEDROCK',
          'CLAUDE_CODE_USE_VERTEX',
          'CLAUDE_CODE_USE_FOUNDRY',
        ],
        passNames: s.passEnv,
        set: { ...set, ...s.env },
      },
    };
  }

  protected reader(run: ModeRun): EventReader {
    return new ClaudeCodeEvents(this.identity, run.timeoutMs);
  }
}
