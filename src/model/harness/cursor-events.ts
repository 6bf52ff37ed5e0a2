/**
 * The JSON lines of `cursor-agent -p --output-format stream-json`, as Cursor documents them
 * (docs/cli/reference/output-format) and as published captures of the real CLI show them:
 * `system/init` (session, model), `assistant` messages, `tool_call` events (`started`, then
 * `completed` with one outcome under `result`: `success`, or `failure`, `rejected`,
 * `permissionDenied`, …), and a terminal `result` (`is_error`, the answer, `usage` with
 * `inputTokens` apart from `cacheReadTokens` / `cacheWriteTokens`). A failure may end the stream
 * without a `result` and with the error on stderr.
 */
import { CallFailure } from '../failure.ts';
import type { Usage } from '../types.ts';
import { jsonLine, type CliEvent } from './cli-harness.ts';
import { processFailure, reportedFailure, type AgentCli } from './failures.ts';
import type { ProcessResult } from './process.ts';
import { TraceRecorder } from './trace.ts';
import type { AgentOutcome, AgentRun, EventReader } from './types.ts';

/** `{ readToolCall: { args, result } }` → ['read', {args, result}]. */
function toolOf(toolCall: CliEvent | undefined): [string, CliEvent] {
  const key = Object.keys(toolCall ?? {})[0] ?? 'tool';
  return [key.replace(/ToolCall$/, ''), toolCall?.[key] ?? {}];
}

function inputOf(args: Record<string, unknown> | undefined): string {
  if (!args) return '';
  const v = args.command ?? args.path ?? args.globPattern ?? args.pattern ?? args.query;
  return typeof v === 'string' ? v : JSON.stringify(args);
}

export class CursorEvents implements EventReader {
  readonly trace = new TraceRecorder();
  private result?: CliEvent;

  constructor(
    private readonly cli: AgentCli,
    private readonly timeoutMs?: number,
  ) {}

  line(raw: string): void {
    const e = jsonLine(raw);
    if (!e) return;
    if (e.type === 'system' && e.subtype === 'init') {
      this.trace.sessionId = e.session_id;
      this.trace.model = e.model;
    } else if (e.type === 'tool_call') {
      const [tool, call] = toolOf(e.tool_call);
      if (e.subtype === 'started') this.trace.call(e.call_id, tool, inputOf(call.args));
      else if (e.subtype === 'completed') {
        const outcome = Object.keys(call.result ?? {}).find((k) => k !== 'pid' && k !== 'sandboxPolicy');
        if (outcome && outcome !== 'success') {
          const detail = call.result[outcome];
          const why = detail?.reason || detail?.error || detail?.stderr;
          this.trace.failed(e.call_id, `${outcome}${why ? `: ${why}` : ''}`);
        }
      }
    } else if (e.type === 'result') {
      this.result = e;
    }
  }

  private usage(): Usage {
    const u = this.result?.usage ?? {};
    const cached = u.cacheReadTokens ?? 0;
    return {
      input: (u.inputTokens ?? 0) + cached + (u.cacheWriteTokens ?? 0),
      output: u.outputTokens ?? 0,
      cached,
      reasoning: 0,
    };
  }

  finish(proc: ProcessResult, run: AgentRun): AgentOutcome {
    if (proc.timedOut || proc.spawnError || !this.result) throw processFailure(this.cli, proc, this.timeoutMs);
    const r = this.result;
    const text = typeof r.result === 'string' ? r.result : '';
    if (r.is_error || r.subtype === 'error')
      throw reportedFailure(this.cli, text || proc.stderr || 'the run ended with an error');
    if (!text.trim()) throw new CallFailure(`${this.cli.title}: the run ended without a final message`, 'bad_response');
    return {
      text,
      usage: this.usage(),
      trace: this.trace.build('cursor', run, proc.durationMs, proc.exitCode),
    };
  }
}
