/**
 * What the console says while calls fail or wait: the scheduler reports every failed attempt and
 * every long wait here, and the watch turns them into events, per role. Failures: the first failure at once, then at most one event
 * per interval, with the failures since the last one and the last error (the event log redacts it). When
 * a role's server cannot be reached at all, its first event says where it was looked for and what
 * to check, once.
 */
import type { CallFailure } from './failure.ts';
import type { Role } from './types.ts';

/** What the model stack tells the run (the shapes of the run's own events). */
export type ModelEvent =
  | {
      type: 'model_retry';
      role: Role;
      model: string;
      /** Failed attempts since the last event of this role. */
      failures: number;
      /** Failed attempts of this role so far. */
      total: number;
      kind: string;
      /** False when the last failed call was given up (no retry left, or not retryable). */
      retrying: boolean;
      last_error: string;
      hint?: string;
    }
  | {
      type: 'model_wait';
      role: Role;
      model: string;
      /** Why the calls of this role wait. */
      reason: string;
      seconds: number;
      /** When the wait ends (ISO time). */
      until: string;
    }
  | { type: 'log'; level: 'info' | 'warn'; message: string };

interface RoleState {
  pending: number;
  total: number;
  lastAt: number;
  hinted: boolean;
  /** The end of the last wait reported (ms since the epoch). */
  waitUntil: number;
}

export class RetryWatch {
  private readonly roles = new Map<Role, RoleState>();

  constructor(
    private readonly emit: (event: ModelEvent) => void,
    private readonly intervalMs = 5000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  private state(role: Role): RoleState {
    let s = this.roles.get(role);
    if (!s) {
      s = { pending: 0, total: 0, lastAt: -Infinity, hinted: false, waitUntil: 0 };
      this.roles.set(role, s);
    }
    return s;
  }

  /**
   * A call of `role` waits `ms` before its next attempt (or its pool pauses). Reported unless an
   * earlier report of the role already covers it: calls hit by one rate limit wait together.
   */
  waiting(role: Role, model: string, ms: number, reason: string, epochMs = Date.now()): void {
    const s = this.state(role);
    const until = epochMs + ms;
    if (until <= s.waitUntil + 1000) return;
    s.waitUntil = until;
    this.emit({
      type: 'model_wait',
      role,
      model,
      reason,
      seconds: Math.round(ms / 100) / 10,
      until: new Date(until).toISOString(),
    });
  }

  /** One failed attempt of a call of `role` to `model` at `url`; `final`: no retry follows. */
  failed(role: Role, model: string, url: string | undefined, failure: CallFailure, final: boolean): void {
    const s = this.state(role);
    s.pending++;
    s.total++;
    const hint =
      failure.kind === 'network' && url && !s.hinted
        ? `model.${role} cannot reach ${url}: is the server running and listening there? Check model.${role}.base_url (or the backend's *_BASE_URL variable)`
        : undefined;
    const now = this.now();
    if (!hint && now - s.lastAt < this.intervalMs) return;
    if (hint) s.hinted = true;
    this.emit({
      type: 'model_retry',
      role,
      model,
      failures: s.pending,
      total: s.total,
      kind: failure.kind,
      retrying: !final,
      last_error: failure.message,
      ...(hint ? { hint } : {}),
    });
    s.pending = 0;
    s.lastAt = now;
  }
}
