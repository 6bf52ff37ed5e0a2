/**
 * An agent harness: one coding-agent CLI run non-interactively in a prepared workspace, its
 * machine-readable event stream read into the final answer, usage and a compact trace.
 */
import type { Usage } from '../types.ts';
import type { ProcessResult } from './process.ts';
import type { SkillLayout } from './skill-install.ts';
import type { AgentTrace, TraceRecorder } from './trace.ts';

export interface AgentRun {
  /** The workspace: the agent's working directory and the only place it may read. */
  workspace: string;
  prompt: string;
  /** Workspace-relative images to attach to the prompt where the CLI can (else they are files it reads). */
  images: string[];
  /** The installed skill's folder, workspace-relative: the trace names the package files used under it. */
  skillDir?: string;
  /**
   * End the run as soon as the agent loads the skill at `skillDir` (an activation rollout that
   * scores nothing else): its outcome then has no answer, and the trace says `stopped`.
   */
  untilLoaded?: boolean;
  /** Per-run wall-clock limit (ms); the agent and everything it started are killed when it passes. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface AgentOutcome {
  /** The agent's final message ('' for a run stopped once its skill loaded). */
  text: string;
  usage: Usage;
  /** False when the run was stopped before the CLI reported all of its usage (then `usage` is a lower bound). */
  usageComplete?: boolean;
  /** The cost the CLI reported, when it reports one. */
  costUsd?: number;
  trace: AgentTrace;
}

export interface AgentHarness {
  /** 'codex', 'claude-code', 'copilot', 'cursor'. */
  readonly name: string;
  /** Where this agent reads skills and instructions in its workspace. */
  readonly layout: SkillLayout;
  /** Runs the agent once; throws a `CallFailure` (retryable or not) or a `FatalModelError`. */
  run(run: AgentRun): Promise<AgentOutcome>;
}

/** Reads one run's stdout as it arrives, then turns it into the outcome (or throws the failure). */
export interface EventReader {
  /** The trace as it builds up, which the harness watches for the skill's loading. */
  readonly trace: TraceRecorder;
  /**
   * The tokens the stream has reported so far, for a run stopped before its end; undefined when
   * this CLI reports usage only at the end of its run or turn.
   */
  usageSoFar?(): Usage | undefined;
  /** One stdout line; 'stop' when the run cannot succeed any more (a refused login). */
  line(text: string): void | 'stop';
  finish(proc: ProcessResult, run: AgentRun): AgentOutcome;
  /** Removes what the run left outside its workspace (called whether or not `finish` was). */
  dispose?(): void;
}
