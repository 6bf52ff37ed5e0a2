/**
 * Cursor's agent CLI (`cursor-agent -p --output-format stream-json`, the prompt on stdin). It is
 * not on npm, so it is tested against a faithful fake of its documented stream, not the real
 * binary. The skill goes to `.cursor/skills/<name>/SKILL.md` (or `AGENTS.md`). The run uses the
 * workspace as Cursor's workspace with its sandbox on and, unless `allow_writes`, in ask mode
 * (read-only); Cursor offers no way to move its configuration home, so the user's own
 * (`~/.cursor`) is used; its login is that home's or `CURSOR_API_KEY`.
 */
import { CliHarness, type HarnessSettings, type Invocation, type ModeRun } from './cli-harness.ts';
import { CursorEvents } from './cursor-events.ts';
import type { AgentCli } from './failures.ts';
import { AGENT_LAYOUTS } from './skill-install.ts';
import type { EventReader } from './types.ts';

export const CURSOR_CLI: AgentCli = {
  title: 'Cursor agent CLI',
  command: 'cursor-agent',
  install: 'Install it with `curl https://cursor.com/install -fsS | bash`',
  optionKey: 'the role option `path`',
  minVersion: '2026.8.11',
  testedVersion: '2026.8.11',
  login: 'run `cursor-agent login`, or pass a key with options.pass_env: [CURSOR_API_KEY]',
};

export class CursorHarness extends CliHarness {
  readonly name = 'cursor';
  readonly cli = CURSOR_CLI;
  readonly layout = AGENT_LAYOUTS.cursor;

  constructor(settings: HarnessSettings) {
    super(settings);
  }

  protected invocation(run: ModeRun, _binary: string): Invocation {
    const s = this.settings;
    const args = [
      '-p',
      '--output-format',
      'stream-json',
      '--trust',
      '--workspace',
      run.workspace,
      '--sandbox',
      'enabled',
    ];
    args.push(...(run.mode === 'agent' && s.allowWrites ? ['--force'] : ['--mode', 'ask']));
    if (s.model) args.push('--model', s.model);
    args.push(...s.extraArgs);
    return { args, stdin: run.prompt, env: { cliNames: ['CURSOR_API_KEY'], passNames: s.passEnv, set: { ...s.env } } };
  }

  protected reader(run: ModeRun): EventReader {
    return new CursorEvents(this.identity, run.timeoutMs);
  }
}
