/**
 * What an agent did in one run, kept small: the tools it called (name, a one-line summary of the
 * input, whether it failed), the workspace files it touched, and the errors it reported. It goes
 * into the rollout's record and, as `traceText`, into what the optimizer reads.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface ToolStep {
  tool: string;
  /** The call's input in one line (a command, a path, a pattern), cut to a readable length. */
  input: string;
  /** False when the tool reported a failure or was refused. */
  ok: boolean;
  /** The start of the tool's output or error, one line. */
  output?: string;
}

/** Which files of a skill package one run used, by package path, each once, in order of first use. */
export interface PackageUse {
  read: string[];
  ran: string[];
}

export interface AgentTrace {
  /** Which CLI ran: 'codex', 'claude-code', 'copilot', 'cursor'. */
  agent: string;
  /** The CLI's own session or thread id. */
  sessionId?: string;
  /** The model the CLI reported using. */
  model?: string;
  steps: ToolStep[];
  /** Workspace-relative paths the agent read or wrote through its tools. */
  files: string[];
  /**
   * The skill package's own files the agent used, as package paths (`references/forms.md`):
   * `read` those it opened, `ran` those it ran as a program. Absent when no package file was used.
   */
  package?: PackageUse;
  /** The text of the files the request asked back (`returnFiles`) that the agent left; absent ones are missing. */
  returned?: Record<string, string>;
  /** Errors the CLI reported (refusals, failed requests), in order. */
  errors: string[];
  /** Model requests the CLI made, where it says. */
  turns?: number;
  /**
   * The run was ended on purpose before its answer: `skill_loaded` when an activation rollout's
   * agent loaded its skill (all it had to show). Its usage is what the CLI reported until then.
   */
  stopped?: 'skill_loaded';
  durationMs: number;
  exitCode: number | null;
}

const ONE_LINE = 160;

export function oneLine(text: string, max = ONE_LINE): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The trace as a few lines for the optimizer: what was called, on which files, what went wrong. */
export function traceText(trace: AgentTrace, maxSteps = 20): string {
  const lines: string[] = [];
  const shown = trace.steps.slice(0, maxSteps);
  for (const [i, s] of shown.entries())
    lines.push(
      `${i + 1}. ${s.tool}${s.input ? ` ${s.input}` : ''}${s.ok ? '' : ' [failed]'}${!s.ok && s.output ? `: ${s.output}` : ''}`,
    );
  if (trace.steps.length > shown.length) lines.push(`… ${trace.steps.length - shown.length} more tool calls`);
  if (trace.steps.length === 0) lines.push('(no tool calls)');
  if (trace.files.length) lines.push(`files: ${trace.files.join(', ')}`);
  for (const e of trace.errors.slice(0, 3)) lines.push(`error: ${e}`);
  return lines.join('\n');
}

/**
 * Workspace files named in the tools' inputs (paths, or words of a command that are files in
 * the workspace), as workspace-relative paths in order of first mention. Read after the run,
 * before the workspace is removed.
 */
export function filesNamed(inputs: string[], workspace: string): string[] {
  const found = new Set<string>();
  for (const input of inputs) {
    for (const token of input.split(/[\s"'`=,;|<>()]+/)) {
      if (!token || token.length > 500) continue;
      const abs = path.resolve(workspace, token);
      if (abs !== workspace && !abs.startsWith(workspace + path.sep)) continue;
      try {
        if (fs.statSync(abs).isFile()) found.add(path.relative(workspace, abs));
      } catch {
        // not a file of the workspace
      }
    }
  }
  return [...found];
}

/** Builds a trace as a reader goes through a stream: tool calls by id, their failures, errors. */
/** Tools that run a command: a program named in one is run, not read (unless it is a document). */
const COMMAND_TOOL = /bash|shell|terminal|exec|command/i;
const DOCUMENT = /\.(md|markdown|txt|json|ya?ml|csv|html?|xml)$/i;

/**
 * The package files (under `skillDir`, workspace-relative) the calls named, as package paths: a
 * script named in a command tool was run; any other file named, by any tool, was read.
 */
export function packageUse(
  calls: readonly { tool: string; input: string }[],
  workspace: string,
  skillDir: string,
): PackageUse | undefined {
  const prefix = `${skillDir.replace(/\/+$/, '')}/`;
  const read = new Set<string>();
  const ran = new Set<string>();
  const name = prefix.slice(0, -1).split('/').pop();
  for (const call of calls) {
    // Claude Code's Skill tool loads a skill by its name: that is a read of its SKILL.md.
    if (call.tool === 'Skill' && call.input === name) read.add('SKILL.md');
    for (const file of filesNamed([call.input], workspace)) {
      const rel = file.split(path.sep).join('/');
      if (!rel.startsWith(prefix)) continue;
      const inPackage = rel.slice(prefix.length);
      if (COMMAND_TOOL.test(call.tool) && !DOCUMENT.test(inPackage)) ran.add(inPackage);
      else read.add(inPackage);
    }
  }
  return read.size || ran.size ? { read: [...read], ran: [...ran] } : undefined;
}

export class TraceRecorder {
  sessionId?: string;
  model?: string;
  turns?: number;
  readonly steps: ToolStep[] = [];
  readonly errors: string[] = [];
  private readonly byId = new Map<string, ToolStep>();
  private readonly inputs: string[] = [];
  private readonly calls: { tool: string; input: string }[] = [];
  /** How many calls `loadedSkill` has looked at. */
  private seen = 0;

  /** A tool call; `input` whole (its paths name the files), shown on one line. */
  call(id: string | undefined, tool: string, input: string): void {
    const step: ToolStep = { tool, input: oneLine(input), ok: true };
    this.inputs.push(input);
    this.calls.push({ tool, input });
    this.steps.push(step);
    if (id !== undefined) this.byId.set(id, step);
  }

  /** The call `id` failed or was refused. */
  failed(id: string | undefined, output: string): void {
    const step = id === undefined ? undefined : this.byId.get(id);
    if (!step) return;
    step.ok = false;
    step.output = oneLine(output);
  }

  /** A step known complete from one event (no separate result). */
  done(tool: string, input: string, ok: boolean, output?: string): void {
    this.call(undefined, tool, input);
    if (!ok) {
      const step = this.steps[this.steps.length - 1]!;
      step.ok = false;
      if (output !== undefined) step.output = oneLine(output);
    }
  }

  /** Files a tool named (an edit's paths) without a step of their own. */
  touched(paths: string[]): void {
    this.inputs.push(...paths);
  }

  error(message: string): void {
    this.errors.push(oneLine(message));
  }

  /** Whether a call since the last look loaded the skill at `run.skillDir` (its `Skill` tool, or a read of its SKILL.md). */
  loadedSkill(run: { workspace: string; skillDir?: string }): boolean {
    if (!run.skillDir || this.seen === this.calls.length) return false;
    const fresh = this.calls.slice(this.seen);
    this.seen = this.calls.length;
    return Boolean(packageUse(fresh, run.workspace, run.skillDir)?.read.includes('SKILL.md'));
  }

  build(
    agent: string,
    run: { workspace: string; skillDir?: string },
    durationMs: number,
    exitCode: number | null,
    stopped?: AgentTrace['stopped'],
  ): AgentTrace {
    const { workspace } = run;
    const used = run.skillDir ? packageUse(this.calls, workspace, run.skillDir) : undefined;
    return {
      agent,
      ...(this.sessionId ? { sessionId: this.sessionId } : {}),
      ...(this.model ? { model: this.model } : {}),
      steps: this.steps,
      files: filesNamed(this.inputs, workspace),
      ...(used ? { package: used } : {}),
      errors: this.errors,
      ...(this.turns !== undefined ? { turns: this.turns } : {}),
      ...(stopped ? { stopped } : {}),
      durationMs: Math.round(durationMs),
      exitCode,
    };
  }
}
