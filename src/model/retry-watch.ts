/**
 * What the console says while calls fail: the scheduler reports every failed attempt here, and
 * the watch turns them into events, per role: the first failure at once, then at most one event
 * per interval, with the failures since the last one and the last error (secrets redacted). When
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
  | { type: 'log'; level: 'info' | 'warn'; message: string };

interface RoleState {
  pending: number;
  total: number;
  lastAt: number;
  hinted: boolean;
}

export class RetryWatch {
  private readonly roles = new Map<Role, RoleState>();

  constructor(
    private readonly emit: (event: ModelEvent) => void,
    /** Redacts secrets from error messages. */
    private readonly redact: (text: string) => string,
    private readonly intervalMs = 5000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** One failed attempt of a call of `role` to `model` at `url`; `final`: no retry follows. */
  failed(role: Role, model: string, url: string | undefined, failure: CallFailure, final: boolean): void {
    let s = this.roles.get(role);
    if (!s) {
      s = { pending: 0, total: 0, lastAt: -Infinity, hinted: false };
      this.roles.set(role, s);
    }
    s.pending++;
    s.total++;
    const hint = failure.kind === 'network' && url && !s.hinted ? `model.${role} cannot reach ${url}: is the server running and listening there? Check model.${role}.base_url (or the backend's *_BASE_URL variable)` : undefined;
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
      last_error: this.redact(failure.message),
      ...(hint ? { hint } : {}),
    });
    s.pending = 0;
    s.lastAt = now;
  }
}
