/**
 * The JSON lines of `copilot --output-format json`: `assistant.message` (text and the tool
 * requests of one model reply), `tool.execution_start` / `tool.execution_complete` (`success`,
 * the result or the error), `model.call_failure` while it retries, `session.error` when it gives
 * up (with `errorType` and `statusCode`), and a final `result` with the session id and exit code.
 * Token counts are not in the stream: they come from the file `--usage-output-file` writes.
 */
import fs from 'node:fs';
import { CallFailure } from '../failure.ts';
import { ZERO_USAGE, type Usage } from '../types.ts';
import { jsonLine, type CliEvent } from './cli-harness.ts';
import { loginFailure, processFailure, reportedFailure, type AgentCli } from './failures.ts';
import type { ProcessResult } from './process.ts';
import { TraceRecorder } from './trace.ts';
import type { AgentOutcome, AgentRun, EventReader } from './types.ts';

function inputOf(args: unknown): string {
  if (!args || typeof args !== 'object') return String(args ?? '');
  const a = args as Record<string, unknown>;
  const v = a.command ?? a.path ?? a.pattern ?? a.skill ?? a.url ?? a.query;
  return typeof v === 'string' ? v : JSON.stringify(a);
}

/** The usage file: tokens summed over the models the session used. */
export function copilotUsage(file: string): Usage {
  let report: CliEvent | undefined;
  try {
    report = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return { ...ZERO_USAGE };
  }
  const usage = { ...ZERO_USAGE };
  for (const m of Object.values<CliEvent>(report?.modelMetrics ?? {})) {
    const u = m?.usage ?? {};
    usage.input += u.inputTokens ?? 0;
    usage.output += u.outputTokens ?? 0;
    usage.cached += u.cacheReadTokens ?? 0;
    usage.reasoning += u.reasoningTokens ?? 0;
  }
  return usage;
}

export class CopilotEvents implements EventReader {
  private final = '';
  private lastText = '';
  readonly trace = new TraceRecorder();
  private sessionError?: { message: string; status?: number };
  private ended = false;
  private fatal?: Error;

  constructor(
    private readonly cli: AgentCli,
    private readonly usageFile: string,
    private readonly timeoutMs?: number,
  ) {}

  line(raw: string): void | 'stop' {
    const e = jsonLine(raw);
    if (!e) return;
    const d = e.data ?? {};
    switch (e.type) {
      case 'assistant.message': {
        const content = String(d.content ?? '');
        if (d.model) this.trace.model = d.model;
        if (content.trim()) this.lastText = content;
        if (content.trim() && !(d.toolRequests ?? []).length) this.final = content;
        return;
      }
      case 'tool.execution_start':
        this.trace.call(d.toolCallId, String(d.toolName), inputOf(d.arguments));
        return;
      case 'tool.execution_complete':
        if (d.success === false) this.trace.failed(d.toolCallId, String(d.error?.message ?? d.result?.content ?? ''));
        return;
      case 'model.call_failure':
        this.trace.error(`request failed (${d.statusCode ?? d.failureKind ?? '?'}): ${d.errorMessage ?? ''}`);
        return;
      case 'session.error': {
        const message = String(d.message ?? 'the session failed');
        const status = typeof d.statusCode === 'number' ? d.statusCode : undefined;
        this.trace.error(message);
        this.sessionError = { message, ...(status !== undefined ? { status } : {}) };
        if (d.errorType === 'authentication' || status === 401 || status === 403) {
          this.fatal = loginFailure(this.cli, message);
          return 'stop';
        }
        return;
      }
      case 'result':
        this.ended = true;
        if (e.sessionId) this.trace.sessionId = e.sessionId;
        return;
    }
  }

  dispose(): void {
    fs.rmSync(this.usageFile, { force: true });
  }

  finish(proc: ProcessResult, run: AgentRun): AgentOutcome {
    const usage = copilotUsage(this.usageFile);
    if (this.fatal) throw this.fatal;
    if (proc.timedOut || proc.spawnError) throw processFailure(this.cli, proc, this.timeoutMs);
    if (this.sessionError) throw reportedFailure(this.cli, this.sessionError.message, this.sessionError.status);
    if (!this.ended) throw processFailure(this.cli, proc, this.timeoutMs);
    const text = this.final || this.lastText;
    if (!text.trim())
      throw new CallFailure(`${this.cli.title}: the session ended without a final message`, 'bad_response');
    return { text, usage, trace: this.trace.build('copilot', run, proc.durationMs, proc.exitCode) };
  }
}
