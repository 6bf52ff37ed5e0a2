/**
 * A call pool: the model calls that share one provider's limits. It admits a call when all of these
 * allow it: the concurrency limit (adaptive: halved on a 429, grown back by one per window of
 * successes, AIMD), the requests-per-minute pace (starts spaced 60/rpm seconds apart, so no
 * window of any length sees more than its share), the tokens-per-minute bucket (refilled
 * continuously, holding ten seconds' worth), and any pause
 * the server asked for (`retry-after`, an exhausted rate-limit window). Waiting calls start in
 * arrival order.
 */
export interface CallPoolLimits {
  /** Calls in flight at most. */
  concurrency: number;
  /** Requests per minute (0 = no limit). */
  rpm: number;
  /** Tokens per minute (0 = no limit). */
  tpm: number;
}

export interface CallPoolStats {
  started: number;
  /** Most calls in flight at once. */
  maxActive: number;
  /** 429s that lowered the concurrency limit. */
  decreases: number;
  /** The adaptive concurrency limit now. */
  limit: number;
  /** Start times (ms, the pool's clock) of the most recent calls, for checks of the pace. */
  recentStarts: number[];
}

/** Time and timers, given to the pool so that tests can drive its pace without waiting. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface Waiter {
  tokens: number;
  resolve: () => void;
  reject: (err: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

const RECENT = 1000;

export class CallPool {
  private limit: number;
  private active = 0;
  /** Waiting calls; `head` is the first one still waiting (an array with a moving head keeps takes O(1)). */
  private queue: (Waiter | undefined)[] = [];
  private head = 0;
  private nextStartAt = 0;
  private lastStartAt = -Infinity;
  private pausedUntil = 0;
  private tokens: number;
  private tokensAt: number;
  private lastDecreaseAt = -Infinity;
  private timer: unknown;
  private timerDue = 0;
  private readonly interval: number;
  private readonly capacity: number;
  readonly stats: CallPoolStats;

  constructor(
    readonly name: string,
    readonly limits: CallPoolLimits,
    private readonly clock: Clock = realClock,
  ) {
    this.tokensAt = clock.now();
    this.limit = limits.concurrency;
    this.interval = limits.rpm > 0 ? 60_000 / limits.rpm : 0;
    // Ten seconds' worth of tokens: bursts are allowed, but providers that enforce their minute
    // limits over shorter periods are not overrun.
    this.capacity = limits.tpm > 0 ? limits.tpm / 6 : Infinity;
    this.tokens = this.capacity;
    this.stats = { started: 0, maxActive: 0, decreases: 0, limit: this.limit, recentStarts: [] };
  }

  /** Waits for a slot; `tokens` is the call's estimated size, charged against the TPM bucket. */
  acquire(tokens: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { tokens, resolve, reject, signal };
      if (signal) {
        w.onAbort = () => {
          const i = this.queue.indexOf(w, this.head);
          if (i >= 0) this.queue[i] = undefined;
          reject(signal.reason);
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.queue.push(w);
      this.pump();
    });
  }

  /** A call finished (either way): its slot is free. */
  release(): void {
    this.active--;
    this.pump();
  }

  /** Additive increase: one more slot per `limit` successes, up to the configured concurrency. */
  onSuccess(): void {
    if (this.limit < this.limits.concurrency)
      this.limit = Math.min(this.limits.concurrency, this.limit + 1 / this.limit);
    this.stats.limit = this.limit;
    this.pump();
  }

  /**
   * Multiplicative decrease on a 429, once per burst: calls that started before the last
   * decrease were sent at the old rate and do not halve again.
   */
  onRateLimit(startedAt: number): void {
    if (startedAt < this.lastDecreaseAt) return;
    this.limit = Math.max(1, this.limit / 2);
    this.lastDecreaseAt = this.clock.now();
    this.stats.decreases++;
    this.stats.limit = this.limit;
  }

  /** No call starts for `ms` (the server asked us to wait). */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.clock.now() + ms);
    this.pump();
  }

  /** Corrects the TPM bucket once a call's real size is known. */
  charge(tokens: number): void {
    if (this.capacity === Infinity || tokens === 0) return;
    this.refill();
    this.tokens -= tokens;
    this.pump();
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.tokensAt) * this.limits.tpm) / 60_000);
    this.tokensAt = now;
  }

  /** The first call still waiting, skipping those given up. */
  private first(): Waiter | undefined {
    while (this.head < this.queue.length && this.queue[this.head] === undefined) this.head++;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return this.queue[this.head];
  }

  private pump(): void {
    for (let head = this.first(); head && this.active < Math.floor(this.limit); head = this.first()) {
      const now = this.clock.now();
      // Catching up after a late timer goes at most twice the pace: starts never bunch.
      let wait = Math.max(
        0,
        this.pausedUntil - now,
        this.nextStartAt - now,
        this.lastStartAt + this.interval / 2 - now,
      );
      if (wait === 0 && this.capacity !== Infinity) {
        this.refill();
        const need = Math.min(head.tokens, this.capacity);
        if (this.tokens < need) wait = ((need - this.tokens) * 60_000) / this.limits.tpm;
      }
      if (wait > 0) {
        this.schedule(wait);
        return;
      }
      this.queue[this.head++] = undefined;
      if (head.signal && head.onAbort) head.signal.removeEventListener('abort', head.onAbort);
      this.active++;
      this.stats.started++;
      this.stats.maxActive = Math.max(this.stats.maxActive, this.active);
      this.stats.recentStarts.push(now);
      if (this.stats.recentStarts.length > RECENT)
        this.stats.recentStarts.splice(0, this.stats.recentStarts.length - RECENT);
      // The next start is one interval after this one was due: a timer that fires a little late
      // does not push every later start back (the pace holds over a minute), and a pool that was
      // idle starts afresh.
      if (this.interval)
        this.nextStartAt = (now - this.nextStartAt < this.interval ? this.nextStartAt : now) + this.interval;
      this.lastStartAt = now;
      if (this.capacity !== Infinity) this.tokens -= head.tokens;
      head.resolve();
    }
  }

  private schedule(ms: number): void {
    const due = this.clock.now() + ms;
    if (this.timer !== undefined && this.timerDue <= due) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, Math.ceil(ms));
  }
}
