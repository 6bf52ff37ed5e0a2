/**
 * Backends by name. A backend is a factory, in the manner of the AI SDK's providers: given a
 * role's configuration it returns a `ChatModel`. Everything provider-specific stays inside it.
 */
import { addBackendEntry, backendNames, canonicalBackend, type BackendEntry } from '../config/catalog.ts';
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

/** A backend: what the config knows of it (`BackendEntry`: names, default model, options schema) and its factory. */
export interface BackendSpec extends BackendEntry {
  create(role: RoleConfig, ctx: BackendContext): ChatModel | Promise<ChatModel>;
}

const backends = new Map<string, BackendSpec>();

/** Registers a backend's factory, and its names with the config's catalog (which checks configs against them). */
export function registerBackend(spec: BackendSpec): void {
  backends.set(spec.name, spec);
  addBackendEntry(spec);
}

export { backendNames, canonicalBackend };

export function getBackend(name: string): BackendSpec | undefined {
  const canonical = canonicalBackend(name);
  return canonical ? backends.get(canonical) : undefined;
}
