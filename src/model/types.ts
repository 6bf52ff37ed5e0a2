/**
 * The one interface through which everything talks to a model. Stages build a `ChatRequest`;
 * a `ChatModel` (a provider, the simulator, or a wrapper adding scheduling, caching and the
 * ledger) answers it.
 */
import type { ZodType } from 'zod';
import type { AgentTrace } from './harness/trace.ts';
import type { PackageFiles } from '../skill/package/package.ts';

export type Role = 'target' | 'optimizer' | 'judge';

export interface TextPart {
  type: 'text';
  text: string;
}

/** An image given as a data URI, an http(s) URL, or a local file path. */
export interface ImagePart {
  type: 'image';
  image: string;
  mediaType?: string;
  /** OpenAI's image `detail` (resolution the model sees); providers without such a field ignore it. */
  detail?: 'low' | 'high' | 'auto';
}

export interface ToolCall {
  id: string;
  name: string;
  /** Arguments as parsed JSON. */
  input: unknown;
}

export type Message =
  | { role: 'user'; content: string | (TextPart | ImagePart)[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string };

/** A function the model may call; `parameters` is a JSON Schema object. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** An installed skill other than the one under test, as the agent would find it: its folder name and `SKILL.md`. */
export interface SkillListing {
  name: string;
  markdown: string;
}

/** A file an agent target finds in its workspace: given as text, or copied from a local path. */
export interface WorkspaceFile {
  /** Where it goes, relative to the workspace. */
  path: string;
  content?: string;
  /** A local file or directory to copy. */
  source?: string;
}

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

export interface ChatRequest {
  /** The stage this call serves, for the ledger: 'rollout', 'analyst', 'merge', 'ranking', … */
  purpose: string;
  system?: string;
  messages: Message[];
  /** Structured output: the reply is parsed and validated against this schema. */
  schema?: ZodType;
  /** Name of the structured output, for providers that want one. */
  schemaName?: string;
  tools?: ToolSpec[];
  maxOutputTokens?: number;
  temperature?: number;
  reasoningEffort?: ReasoningEffort;
  /** Part of the cache key: repeated samples of one request are not collapsed. */
  sample?: number;
  /** The structured payload the prompt was rendered from; read by the simulator only. */
  meta?: unknown;
  /**
   * The skill this request runs under, as it appears in `system`. Chat models ignore it; an
   * agent target installs it where the agent reads skills and takes it out of the prompt.
   */
  skill?: string;
  /**
   * The skill package's files besides `SKILL.md` (references, scripts, assets), when the skill is
   * a package: an agent target installs them beside its `SKILL.md`; chat models ignore them.
   */
  skillFiles?: PackageFiles;
  /**
   * An activation rollout: the skill (`skill`, a `SKILL.md` with its name and description) is only
   * offered among `others`, by name and description, as the agent lists installed skills, and never
   * pointed to; whether the model loads it is the result. An agent target installs them all and
   * gives it the user's message alone; its trace's `package.read` holds `SKILL.md` when it loaded
   * the skill, and the run ends there unless `toAnswer`. A chat model gets the list and a `Skill`
   * tool in the request itself.
   */
  activation?: {
    others: SkillListing[];
    /** Run an agent to its answer after it loads the skill (the task is scored too); else it is ended once the skill loads. */
    toAnswer?: boolean;
  };
  /** Files an agent target puts in its workspace (documents, data); chat models ignore them. */
  workspaceFiles?: WorkspaceFile[];
  /**
   * Workspace files an agent target hands back after its run (the script it was asked to write),
   * as text in its trace's `returned`; chat models ignore them.
   */
  returnFiles?: string[];
  signal?: AbortSignal;
  /**
   * Called once, when the call is admitted to go to the provider: the ledger journals it then, so
   * that a call in flight when the process dies still counts against the run's limits.
   */
  onSent?: () => void;
}

export interface Usage {
  input: number;
  output: number;
  /** Input tokens served from the provider's prompt cache. */
  cached: number;
  reasoning: number;
  /** Input tokens written to the provider's prompt cache (billed at its write rate); absent = 0. */
  cacheWrite?: number;
  /** Of `cacheWrite`, those written for an hour (Anthropic's 1-hour cache; billed higher). */
  cacheWrite1h?: number;
}

export const ZERO_USAGE: Usage = Object.freeze({ input: 0, output: 0, cached: 0, reasoning: 0 });

/** The usage of two calls together. */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    input: a.input + b.input,
    output: a.output + b.output,
    cached: a.cached + b.cached,
    reasoning: a.reasoning + b.reasoning,
  };
  if (a.cacheWrite !== undefined || b.cacheWrite !== undefined)
    sum.cacheWrite = (a.cacheWrite ?? 0) + (b.cacheWrite ?? 0);
  if (a.cacheWrite1h !== undefined || b.cacheWrite1h !== undefined)
    sum.cacheWrite1h = (a.cacheWrite1h ?? 0) + (b.cacheWrite1h ?? 0);
  return sum;
}

export interface ChatResponse {
  text: string;
  /** The validated object, when the request had a schema. */
  parsed?: unknown;
  toolCalls?: ToolCall[];
  usage: Usage;
  latencyMs: number;
  /** Retries this call needed. */
  retries?: number;
  /** Where the answer came from: the provider, the response cache, or the run's own journal. */
  from?: 'provider' | 'cache' | 'journal';
  /** Cost in USD; null when the price of the model is unknown. */
  costUsd?: number | null;
  /** Answered through a provider's batch API (priced at its discount). */
  batched?: boolean;
  /** What an agent target did (tools, files, errors); absent for chat models. */
  trace?: AgentTrace;
}

export interface ChatModel {
  /** `backend:model`, stable: it is part of cache keys and score-cache keys. */
  readonly id: string;
  /**
   * An agent that runs its own tools in a workspace (Codex, Claude Code, …): envs give it their
   * documents as `workspaceFiles` instead of running a tool loop of their own.
   */
  readonly agentic?: boolean;
  /**
   * Reads a package's files from `ChatRequest.skillFiles` itself (an agent installs them, the
   * simulator opens them); other models get the package's text files in the system prompt.
   */
  readonly readsSkillFiles?: boolean;
  /**
   * A chat model that calls tools: how it gets a package's files (the role's `skill_files`).
   * Absent: the files go in its system prompt.
   */
  readonly skillFiles?: 'inline' | 'tool' | 'auto';
  /** The cost of its calls is known (a price, or free); unset: unknown, so a USD budget cannot count them. */
  readonly priced?: boolean;
  complete(req: ChatRequest): Promise<ChatResponse>;
}

/**
 * A call that failed for reasons of infrastructure (after its retries): rate limits, timeouts,
 * server errors, dropped connections. Recorded and kept out of scores; never a task failure.
 */
export class InfraError extends Error {
  override name = 'InfraError';
  constructor(
    message: string,
    readonly kind: 'rate_limit' | 'timeout' | 'server' | 'network' | 'bad_response' | 'truncated' | 'other',
    readonly retries = 0,
  ) {
    super(message);
  }
}

/**
 * A failure no retry can fix and that would make every later call fail too: a missing or
 * rejected key, an unknown model, a bad endpoint. The run stops at once with this message.
 */
export class FatalModelError extends Error {
  override name = 'FatalModelError';
}

/**
 * A model's settings that cannot work (a key the environment does not hold, an endpoint unset
 * or malformed, a backend option out of range): bad input, found when the models are built,
 * before any call or anything of the run is kept. The CLI exits with code 2, as for any usage
 * error.
 */
export class ModelConfigError extends FatalModelError {
  override name = 'ModelConfigError';
}

/**
 * A stop of the run: a budget reached, a provider asking to wait longer than the role's cap, an
 * endpoint refusing every connection, the user's Ctrl-C. No call is sent after it; the calls in
 * flight finish and are recorded (after the user's stop, those still unanswered after a short
 * grace are abandoned, and made again on resume); the run saves its state and ends, and the same
 * command resumes it.
 */
export class RunStop extends Error {
  override name = 'RunStop';
  constructor(
    message: string,
    /** What stopped it, for the run's `run_stopped` event: a limit, an endpoint that is down, or the user (Ctrl-C). */
    readonly reason: 'budget' | 'wait' | 'unreachable' | 'interrupted',
    /** The budget limit reached (its key and value), so that a resume can raise it. */
    readonly limit?: { key: string; limit: number },
  ) {
    super(message);
  }
}
