/**
 * What every agent CLI harness does the same way: find the binary and check its version (once),
 * build the environment, start the run in the workspace with the prompt on stdin, read the event
 * stream, and end the run (with every command it started) on timeout, abort or a refused login.
 * Each agent supplies its identity, where it reads skills, its command line and its event reader.
 */
import { CallFailure } from '../failure.ts';
import { checkCliVersion, resolveCli } from './binary.ts';
import { childEnvironment, type EnvironmentSpec } from './environment.ts';
import type { AgentCli } from './failures.ts';
import { runProcess } from './process.ts';
import type { SkillLayout } from './skill-install.ts';
import type { ProcessResult } from './process.ts';
import type { AgentHarness, AgentOutcome, AgentRun, EventReader } from './types.ts';
import { ZERO_USAGE } from '../types.ts';

export interface HarnessSettings {
  /** The CLI binary: a path, or a name looked up on PATH ('' = the CLI's usual name). */
  path: string;
  /** '' = the CLI's default model. */
  model: string;
  /** '' = the CLI's default. */
  reasoningEffort: string;
  /** The environment skillopt runs in; the child's is built from it. */
  environment: Record<string, string | undefined>;
  /** The CLI's configuration home: '' = a fresh one per run with the user's login, 'user', or a directory. */
  home: string;
  /** Variables set for the CLI. */
  env: Record<string, string>;
  /** Variables passed through from skillopt's environment by name. */
  passEnv: string[];
  /** Let the agent change files in its workspace (else it may only read). */
  allowWrites: boolean;
  /** Extra command-line arguments, added before the prompt. */
  extraArgs: string[];
  /** The model endpoint, for CLIs that can be pointed at one ('' = the CLI's own). */
  baseUrl: string;
  /** The variable holding the endpoint's key ('' = none). */
  apiKeyEnv: string;
  /** Told once when the CLI is newer than the newest version tested. */
  onNote?: (message: string) => void;
}

/** 'agent': a task in a workspace with the agent's tools; 'chat': one reply, no tools. */
export type RunMode = 'agent' | 'chat';

export interface Invocation {
  args: string[];
  stdin: string;
  env: EnvironmentSpec;
}

export interface ModeRun extends AgentRun {
  mode: RunMode;
  /** In chat mode, the system prompt (only for CLIs with `takesSystemPrompt`; others get it in `prompt`). */
  system?: string;
}

export abstract class CliHarness implements AgentHarness {
  abstract readonly name: string;
  abstract readonly cli: AgentCli;
  abstract readonly layout: SkillLayout;
  /** The CLI can replace its own system prompt (chat mode passes `system` apart). */
  readonly takesSystemPrompt: boolean = false;
  /** The CLI reports what each run cost (Claude Code's `total_cost_usd`). */
  readonly reportsCost: boolean = false;
  private binary?: string;
  private noted = false;

  constructor(protected readonly settings: HarnessSettings) {}

  /** The CLI as its errors name it: with the endpoint the role points it at, when it sets one. */
  protected get identity(): AgentCli {
    const s = this.settings;
    return s.baseUrl ? { ...this.cli, endpoint: { url: s.baseUrl, keyEnv: s.apiKeyEnv } } : this.cli;
  }

  /** The command line, stdin and environment of one run. */
  protected abstract invocation(run: ModeRun, binary: string): Invocation;
  protected abstract reader(run: ModeRun): EventReader;

  run(run: AgentRun): Promise<AgentOutcome> {
    return this.runMode({ ...run, mode: 'agent' });
  }

  async runMode(run: ModeRun): Promise<AgentOutcome> {
    const binary = (this.binary ??= resolveCli(this.cli, this.settings.path, this.settings.environment.PATH));
    const inv = this.invocation(run, binary);
    const env = childEnvironment(this.settings.environment, inv.env);
    const version = await checkCliVersion(this.cli, binary, env);
    if (version.note && !this.noted) {
      this.noted = true;
      this.settings.onNote?.(version.note);
    }
    const reader = this.reader(run);
    let loaded = false;
    const proc = await runProcess({
      command: binary,
      args: inv.args,
      cwd: run.workspace,
      env,
      stdin: inv.stdin,
      ...(run.timeoutMs ? { timeoutMs: run.timeoutMs } : {}),
      ...(run.signal ? { signal: run.signal } : {}),
      onLine: (line) => {
        if (reader.line(line) === 'stop') return 'stop';
        if (run.untilLoaded && reader.trace.loadedSkill(run)) {
          loaded = true;
          return 'stop';
        }
      },
    });
    try {
      if (proc.aborted) throw new CallFailure(`${this.cli.title}: the run was stopped`, 'timeout');
      if (loaded) return this.stoppedLoaded(reader, proc, run);
      return reader.finish(proc, run);
    } finally {
      reader.dispose?.();
    }
  }

  /** A run ended once its skill loaded: no answer, the usage reported so far (a lower bound). */
  private stoppedLoaded(reader: EventReader, proc: ProcessResult, run: AgentRun): AgentOutcome {
    const usage = reader.usageSoFar?.();
    return {
      text: '',
      usage: usage ?? { ...ZERO_USAGE },
      usageComplete: false,
      trace: reader.trace.build(this.name, run, proc.durationMs, proc.exitCode, 'skill_loaded'),
    };
  }
}

/**
 * An event an agent CLI printed: its shape changes between CLI versions, so readers take each
 * field they use with a check or a default (`?.`, `??`, `typeof`) rather than a schema that a
 * new field would break.
 */
// biome-ignore lint/suspicious/noExplicitAny: read field by field, each field checked where it is used
export type CliEvent = Record<string, any>;

/** One JSON object per line; other lines (warnings some CLIs print on stdout) are skipped. */
export function jsonLine(line: string): CliEvent | undefined {
  const t = line.trim();
  if (!t.startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(t);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as CliEvent) : undefined;
  } catch {
    return undefined;
  }
}
