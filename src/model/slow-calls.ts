/**
 * Calls that take long, said on the console: once a role has had a call to its provider without
 * a reply for `afterMs`, the console hears which role, how many of its calls are outstanding, how
 * long the oldest has been, and when each is given up (the role's timeout); again every `everyMs`
 * while it lasts. A hung provider is never five minutes of silence.
 */
import type { ModelEvent } from './retry-watch.ts';

export interface SlowCallNotices {
  /** A call outstanding this long is reported (ms). */
  afterMs: number;
  /** Reported again this often while it lasts (ms). */
  everyMs: number;
}

interface RoleCalls {
  model: string;
  timeoutMs: number;
  /** Start times of the calls outstanding (ms, the watch's clock). */
  started: Set<{ at: number }>;
  /** When this role's calls were last reported; undefined: not since its calls were last all answered. */
  reportedAt?: number;
}

/** A duration for people: `40 s`, `5 min`. */
function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds >= 120 ? `${Math.round(seconds / 60)} min` : `${seconds} s`;
}

export class SlowCalls {
  /** By the role's label ('model.target'). */
  private readonly roles = new Map<string, RoleCalls>();
  private timer: NodeJS.Timeout | undefined;
  private outstanding = 0;

  constructor(
    private readonly emit: (event: ModelEvent) => void,
    private readonly notices: SlowCallNotices,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A call of the role `label` ('model.target') is sent; the function returned says it ended (either way). */
  begin(label: string, model: string, timeoutMs: number): () => void {
    let calls = this.roles.get(label);
    if (!calls) {
      calls = { model, timeoutMs, started: new Set() };
      this.roles.set(label, calls);
    }
    const call = { at: this.now() };
    calls.started.add(call);
    this.outstanding++;
    this.timer ??= setInterval(() => this.check(), this.tickMs()).unref();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      calls.started.delete(call);
      if (calls.started.size === 0) calls.reportedAt = undefined;
      if (--this.outstanding === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  private tickMs(): number {
    return Math.max(20, Math.min(1000, this.notices.afterMs / 4, this.notices.everyMs / 4));
  }

  /** Reports each role whose oldest call is past the threshold and was not reported lately. */
  check(): void {
    const now = this.now();
    for (const [label, calls] of this.roles) {
      if (calls.started.size === 0) continue;
      let oldest = now;
      for (const c of calls.started) oldest = Math.min(oldest, c.at);
      const age = now - oldest;
      if (age < this.notices.afterMs) continue;
      if (calls.reportedAt !== undefined && now - calls.reportedAt < this.notices.everyMs) continue;
      calls.reportedAt = now;
      const n = calls.started.size;
      this.emit({
        type: 'log',
        level: 'warn',
        message: `${label} (${calls.model}): ${n === 1 ? '1 call has' : `${n} calls have`} had no reply yet, the oldest for ${duration(age)}; each is given up after ${duration(calls.timeoutMs)} (${label}.timeout_s)`,
      });
    }
  }
}
