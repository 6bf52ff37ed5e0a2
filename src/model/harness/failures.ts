/**
 * What went wrong in an agent run, classified the way the scheduler understands provider
 * failures: a login no retry will fix stops the run (`FatalModelError`, with how to log in); the
 * CLI's own rate-limit and overload messages, a timeout, a crash or a run that ended without an
 * answer are retryable `CallFailure`s; none of them is ever a score.
 */
import { CallFailure } from '../failure.ts';
import { FatalModelError } from '../types.ts';
import type { CliIdentity } from './binary.ts';
import type { ProcessResult } from './process.ts';

export interface AgentCli extends CliIdentity {
  /** How to log in, for messages: 'run `codex login`, or set CODEX_API_KEY'. */
  login: string;
  /** The endpoint the role points the CLI at (`base_url`), and the variable of its key (`api_key_env`, '' = none). */
  endpoint?: { url: string; keyEnv: string };
}

const AUTH =
  /not logged in|please run \/login|\/login\b|log ?in (again|first|required)|no authentication information|authentication[ _]?(failed|required|error)|invalid[ _]api[ _]key|incorrect api key|invalid x-api-key|unauthori[sz]ed|\b401\b|\b403\b|forbidden|token (has )?expired|refresh token|oauth token|invalid_grant/i;
const RATE =
  /rate[ _-]?limit|\b429\b|too many requests|usage limit|limit reached|quota|try again (in|at|later)|resets? (at|in)/i;
const CONTEXT = /context[ _]length|context window|prompt is too long|too many tokens|maximum context/i;
const OVERLOAD =
  /overloaded|\b5\d\d\b|server error|internal error|bad gateway|service unavailable|temporarily unavailable|upstream/i;
const NETWORK =
  /ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|connection (refused|reset|closed|error)|network error|fetch failed|socket hang up|stream disconnected/i;

export function short(text: string, max = 400): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function isAuthText(text: string): boolean {
  return AUTH.test(text);
}

export function loginFailure(cli: AgentCli, detail: string): FatalModelError {
  const endpoint = cli.endpoint;
  // Pointed at an endpoint with a key of the role's: that key was refused, not a login.
  if (endpoint?.keyEnv)
    return new FatalModelError(
      `the ${cli.title}'s endpoint ${endpoint.url} refused the key in ${endpoint.keyEnv} (${short(detail, 300)}): check that variable (the role's api_key_env) and the key's access to this model`,
    );
  const orKey = endpoint
    ? `; or, if ${endpoint.url} wants a key of its own, name the variable that holds it in the role's api_key_env`
    : '';
  return new FatalModelError(
    `the ${cli.title} is not logged in, or its login was refused (${short(detail, 300)}): ${cli.login}${orKey}`,
  );
}

/** A seconds or milliseconds wait named in an error message ("try again in 20s"). */
function waitFrom(text: string): number | undefined {
  const m = /(?:try again|retry) in (\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?|m|min|minutes?)\b/i.exec(text);
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2]!.toLowerCase();
  return unit === 'ms' ? n : unit.startsWith('m') ? n * 60_000 : n * 1000;
}

/**
 * An error the CLI reported, classified by its HTTP status when known, else by its words.
 * Login problems become a `FatalModelError`; the rest a `CallFailure`.
 */
export function reportedFailure(
  cli: AgentCli,
  message: string,
  status?: number,
  retryAfterMs?: number,
): CallFailure | FatalModelError {
  const text = `${cli.title}: ${short(message)}`;
  if (status === 401 || status === 403 || (status === undefined && AUTH.test(message) && !RATE.test(message)))
    return loginFailure(cli, message);
  if (status === 429 || RATE.test(message))
    return new CallFailure(text, 'rate_limit', status ?? 429, retryAfterMs ?? waitFrom(message));
  if (CONTEXT.test(message)) return new CallFailure(text, 'rejected', status);
  if (status === 408) return new CallFailure(text, 'timeout', status);
  if ((status !== undefined && status >= 500) || OVERLOAD.test(message)) return new CallFailure(text, 'server', status);
  if (NETWORK.test(message)) return new CallFailure(text, 'network');
  return new CallFailure(text, 'server', status);
}

/** What the process itself says when the event stream gave no answer: spawn errors, timeouts, crashes. */
export function processFailure(
  cli: AgentCli,
  proc: ProcessResult,
  timeoutMs: number | undefined,
): CallFailure | FatalModelError {
  if (proc.spawnError) {
    const code = proc.spawnError.code;
    if (code === 'ENOENT' || code === 'EACCES') {
      return new FatalModelError(
        `the ${cli.title} could not be started (${code}: ${proc.spawnError.message}). ${cli.install}, or set ${cli.optionKey} to its path`,
      );
    }
    return new CallFailure(`${cli.title}: could not start (${proc.spawnError.message})`, 'server');
  }
  if (proc.timedOut)
    return new CallFailure(
      `${cli.title}: no answer within ${Math.round((timeoutMs ?? 0) / 1000)} s; the agent and its commands were stopped`,
      'timeout',
    );
  // The end of stderr says what went wrong (CLIs print warnings first).
  const stderr = proc.stderr
    .split('\n')
    .filter((l) => l.trim())
    .slice(-6)
    .join('\n');
  if (stderr) return reportedFailure(cli, stderr);
  const how = proc.signal ? `was killed by ${proc.signal}` : `exited with code ${proc.exitCode}`;
  return new CallFailure(`${cli.title}: the agent ${how} without an answer`, 'server');
}
