/** What the MCP tools answer: text results, a CLI process's outcome, progress notifications. */
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CliResult } from './cli-process.ts';

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export const text = (t: string, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: t }],
  ...(isError ? { isError: true } : {}),
});

/** The end of a long output (an agent's context is precious). */
export function tail(s: string, max = 4000): string {
  return s.length > max ? `…${s.slice(-max)}` : s;
}

/** A CLI process's output as a tool result; an error unless it exited with 0 (or one of `okCodes`). */
export function outcome(r: CliResult, what: string, okCodes: number[] = [0]): CallToolResult {
  if (r.cancelled)
    return text(`${what} was cancelled (exit ${r.exitCode ?? r.signal}).\n${tail(r.stdout + r.stderr)}`, true);
  const out = [r.stdout.trim(), r.stderr.trim() ? `[stderr]\n${r.stderr.trim()}` : ''].filter(Boolean).join('\n');
  return text(tail(out) || `${what} printed nothing`, r.exitCode === null || !okCodes.includes(r.exitCode));
}

/** Sends a progress notification when the client asked for them (a progress token). */
export function progressSender(extra: Extra) {
  const token = extra._meta?.progressToken;
  let count = 0;
  return async (message: string, progress?: number, total?: number) => {
    if (token === undefined) return;
    count++;
    await extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: progress ?? count, ...(total ? { total } : {}), message },
      })
      .catch(() => {});
  };
}
