/**
 * The JSON lines of `codex exec --json`: `thread.started` (the session id), `item.*` events for
 * commands, file changes, MCP and web-search calls and agent messages, `turn.completed` with the
 * usage summed over the turn's requests (input tokens include cached ones), `turn.failed` and
 * `error` events (retries it announces, and the final failure).
 */
import { shellSplit } from '../../run/resume-command.ts';
import { CallFailure } from '../failure.ts';
import type { Usage } from '../types.ts';
import { jsonLine, type CliEvent } from './cli-harness.ts';
import { loginFailure, processFailure, reportedFailure, short, type AgentCli } from './failures.ts';
import type { ProcessResult } from './process.ts';
import { TraceRecorder } from './trace.ts';
import type { AgentOutcome, AgentRun, EventReader } from './types.ts';

/** `/bin/bash -lc 'cat task.md'` → `cat task.md`, whatever quotes Codex wrote the command in (`-lc "grep 'x' f"`). */
export function unwrapShell(command: string): string {
  const m = /^\S*\b(?:ba|z)?sh\s+-l?c\s+(\S[\s\S]*)$/.exec(command.trim());
  if (!m) return command;
  let words: string[];
  try {
    words = shellSplit(m[1]!);
  } catch {
    return command;
  }
  return words.length === 1 ? words[0]! : command;
}

function statusOf(message: string): number | undefined {
  const m = /(?:unexpected status|last status:?)\s*(\d{3})/.exec(message);
  return m ? Number(m[1]) : undefined;
}

export class CodexEvents implements EventReader {
  private text = '';
  readonly trace = new TraceRecorder();
  private usage: Usage = { input: 0, output: 0, cached: 0, reasoning: 0 };
  private completed = false;
  private failed?: string;
  private fatal?: Error;

  constructor(
    private readonly cli: AgentCli,
    private readonly timeoutMs?: number,
  ) {}

  line(raw: string): void | 'stop' {
    const e = jsonLine(raw);
    if (!e) return;
    switch (e.type) {
      case 'thread.started':
        this.trace.sessionId = e.thread_id;
        return;
      case 'item.completed':
        this.item(e.item ?? {});
        return;
      case 'turn.completed': {
        const u = e.usage ?? {};
        this.usage = {
          input: this.usage.input + (u.input_tokens ?? 0),
          output: this.usage.output + (u.output_tokens ?? 0),
          cached: this.usage.cached + (u.cached_input_tokens ?? 0),
          reasoning: this.usage.reasoning + (u.reasoning_output_tokens ?? 0),
        };
        this.completed = true;
        return;
      }
      case 'turn.failed':
        this.failed = String(e.error?.message ?? 'the turn failed');
        return;
      case 'error': {
        const message = String(e.message ?? '');
        this.trace.error(message);
        const status = statusOf(message);
        // Codex retries a refused login five times; no retry will fix it.
        if (status === 401 || status === 403) {
          this.fatal = loginFailure(this.cli, message);
          return 'stop';
        }
        return;
      }
    }
  }

  private item(item: CliEvent): void {
    switch (item.type) {
      case 'agent_message':
        this.text = String(item.text ?? '');
        return;
      case 'command_execution': {
        const command = unwrapShell(String(item.command ?? ''));
        this.trace.done(
          'shell',
          command,
          item.status === 'completed' && item.exit_code === 0,
          String(item.aggregated_output ?? ''),
        );
        return;
      }
      case 'file_change': {
        const changes: { path?: string; kind?: string }[] = item.changes ?? [];
        this.trace.done(
          'edit',
          changes.map((c) => `${c.kind ?? 'change'} ${c.path ?? ''}`).join(', '),
          item.status === 'completed',
        );
        this.trace.touched(changes.map((c) => c.path ?? ''));
        return;
      }
      case 'mcp_tool_call':
        this.trace.done(
          `${item.server}.${item.tool}`,
          JSON.stringify(item.arguments ?? ''),
          item.status === 'completed',
        );
        return;
      case 'web_search':
        this.trace.done('web_search', String(item.query ?? ''), true);
        return;
      case 'error':
        this.trace.error(String(item.message ?? ''));
        return;
    }
  }

  finish(proc: ProcessResult, run: AgentRun): AgentOutcome {
    if (this.fatal) throw this.fatal;
    if (proc.timedOut || proc.spawnError) throw processFailure(this.cli, proc, this.timeoutMs);
    if (this.failed !== undefined) throw reportedFailure(this.cli, this.failed, statusOf(this.failed));
    if (!this.completed) throw processFailure(this.cli, proc, this.timeoutMs);
    const errors = this.trace.errors;
    if (!this.text.trim())
      throw new CallFailure(
        `${this.cli.title}: the turn ended without a final message${errors.length ? ` (${short(errors.join('; '), 200)})` : ''}`,
        'bad_response',
      );
    return {
      text: this.text,
      usage: this.usage,
      trace: this.trace.build('codex', run, proc.durationMs, proc.exitCode),
    };
  }
}
