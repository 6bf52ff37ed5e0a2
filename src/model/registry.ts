/**
 * Backends by name. A backend is a factory, in the manner of the AI SDK's providers: given a
 * role's configuration it returns a `ChatModel`. Everything provider-specific stays inside it.
 */
import type { ZodObject } from 'zod';
import type { RoleConfig } from '../config/schema.ts';
import type { ChatModel, Role } from './types.ts';

export interface BackendContext {
  role: Role;
  /** Variables to read keys from (the shell's plus `.env`). */
  environment: Record<string, string | undefined>;
  /** The run's global reasoning effort ('' = off), for roles that set none. */
  reasoningEffort: string;
  /** Seed of the run (the simulator uses it). */
  seed: number;
  /** Where a backend says what it left out of requests (an option the model does not take); once per option. */
  notice?: (message: string) => void;
  /** The HTTP client of providers (default: the global `fetch`); tests give one that answers in-process. */
  fetch?: typeof fetch;
}

export interface BackendSpec {
  name: string;
  aliases: string[];
  /** Model used when the role names none. */
  defaultModel: string;
  /** Schema of the role's `options` mapping. */
  optionsSchema?: ZodObject;
  /**
   * Role settings that differ for this backend when the config leaves them unset (an agent CLI
   * runs fewer calls at once, each for longer, than an API).
   */
  roleDefaults?: Partial<Pick<RoleConfig, 'concurrency' | 'timeout_s' | 'max_retries'>>;
  /** An agent harness that can only play the target (it runs tasks; it cannot answer the optimizer's prompts). */
  targetOnly?: boolean;
  create(role: RoleConfig, ctx: BackendContext): ChatModel | Promise<ChatModel>;
}

const backends = new Map<string, BackendSpec>();
const aliases = new Map<string, string>();

export function registerBackend(spec: BackendSpec): void {
  backends.set(spec.name, spec);
  aliases.set(spec.name, spec.name);
  for (const alias of spec.aliases) aliases.set(alias, spec.name);
}

/** The canonical name of a backend or alias, or undefined. */
export function canonicalBackend(name: string): string | undefined {
  return aliases.get(name.trim().toLowerCase());
}

export function getBackend(name: string): BackendSpec | undefined {
  const canonical = canonicalBackend(name);
  return canonical ? backends.get(canonical) : undefined;
}

/** Every accepted spelling. */
export function backendNames(): string[] {
  return [...aliases.keys()].sort();
}
