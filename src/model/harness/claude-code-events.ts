/**
 * The JSON lines of `claude -p --output-format stream-json --verbose`: `system/init` (session,
 * model), one `assistant` event per content block (text, `tool_use`), `user` events carrying the
 * tool results, `system/api_retry` while it retries a failed request, and the final `result`
 * (the answer, `is_error`, `api_error_status`, cost, usage). An API failure ends with
 * `subtype: success` and `is_error: true`, so `is_error` is what counts. Usage follows the
 * Messages API: input tokens exclude cache reads and writes, which are reported apart.
 */
import { CallFailure } from '../failure.ts';
import { addUsage, type Usage } from '../types.ts';
import { jsonLine, type CliEvent } from './cli-harness.ts';
import { loginFailure, processFailure, reportedFailure, type AgentCli } from './failures.ts';
import type { ProcessResult } from './process.ts';
import { TraceRecorder } from './trace.ts';
import type { AgentOutcome, AgentRun, EventReader } from './types.ts';

/** The part of a Claude Code tool input that says what it did. */
function inputOf(input: Record<string, unknown>): string {
  const v = input.command ?? input.file_path ?? input.path ?? input.pattern ?? input.skill ?? input.url ?? input.query;
  return typeof v === 'string' ? v : JSON.stringify(input);
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((c) => (c && typeof c === 'object' && 'text' in c ? String((c as { text: unknown }).text) : ''))
      .join(' ');
  return '';
}

/** Messages API usage: input tokens exclude cache reads and writes, which are added back (and the writes kept apart, for their price). */
function usageOf(u: CliEvent): Usage {
  const cached = u.cache_read_input_tokens ?? 0;
  const cacheWrite = u.cache_creation_input_tokens ?? 0;
  return {
    input: (u.input_tokens ?? 0) + cached + cacheWrite,
    output: u.output_tokens ?? 0,
    cached,
    reasoning: 0,
    ...(cacheWrite ? { cacheWrite } : {}),
  };
}

export class ClaudeCodeEvents implements EventReader {
  readonly trace = new TraceRecorder();
  private result?: CliEvent;
  private fatal?: Error;
  /** Each model reply's usage as its `assistant` events carry it (one event per content block, the same message id). */
  private readonly replies = new Map<string, CliEvent>();

  constructor(
    private readonly cli: AgentCli,
    private readonly timeoutMs?: number,
  ) {}

  line(raw: string): void | 'stop' {
    const e = jsonLine(raw);
    if (!e) return;
    if (e.type === 'system' && e.subtype === 'init') {
      this.trace.sessionId = e.session_id;
      this.trace.model = e.model;
    } else if (e.type === 'system' && e.subtype === 'api_retry') {
      this.trace.error(
        `request failed (${e.error_status ?? '?'} ${e.error ?? ''}), retry ${e.attempt}/${e.max_retries}`,
      );
      // Claude Code retries a refused login ten times with growing waits; no retry will fix it.
      if (e.error_status === 401 || e.error_status === 403 || e.error === 'authentication_failed') {
        this.fatal = loginFailure(this.cli, `HTTP ${e.error_status ?? ''} ${e.error ?? ''}`.trim());
        return 'stop';
      }
    } else if (e.type === 'assistant') {
      if (e.message?.id && e.message.usage) this.replies.set(String(e.message.id), e.message.usage);
      for (const block of e.message?.content ?? []) {
        if (block.type === 'tool_use') this.trace.call(block.id, String(block.name), inputOf(block.input ?? {}));
      }
    } else if (e.type === 'user') {
      for (const block of Array.isArray(e.message?.content) ? e.message.content : []) {
        if (block.type === 'tool_result' && block.is_error)
          this.trace.failed(block.tool_use_id, resultText(block.content));
      }
    } else if (e.type === 'result') {
      this.result = e;
    }
  }

  /** The replies so far: their input as sent; their output as counted when each started, so a lower bound. */
  usageSoFar(): Usage | undefined {
    if (this.replies.size === 0) return undefined;
    return [...this.replies.values()].map(usageOf).reduce(addUsage);
  }

  private usage(): Usage {
    return usageOf(this.result?.usage ?? {});
  }

  finish(proc: ProcessResult, run: AgentRun): AgentOutcome {
    if (this.fatal) throw this.fatal;
    if (proc.timedOut || proc.spawnError || !this.result) throw processFailure(this.cli, proc, this.timeoutMs);
    const r = this.result;
    const text = typeof r.result === 'string' ? r.result : '';
    if (r.is_error) {
      const status = typeof r.api_error_status === 'number' ? r.api_error_status : undefined;
      throw reportedFailure(this.cli, text || `the run ended with ${r.subtype}`, status);
    }
    if (!text.trim())
      throw new CallFailure(`${this.cli.title}: the run ended without a final message (${r.subtype})`, 'bad_response');
    for (const d of r.permission_denials ?? [])
      this.trace.error(`permission denied: ${d.tool_name} ${inputOf(d.tool_input ?? {})}`);
    if (typeof r.num_turns === 'number') this.trace.turns = r.num_turns;
    return {
      text,
      usage: this.usage(),
      ...(typeof r.total_cost_usd === 'number' ? { costUsd: r.total_cost_usd } : {}),
      trace: this.trace.build('claude-code', run, proc.durationMs, proc.exitCode),
    };
  }
}
