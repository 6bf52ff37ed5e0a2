/**
 * A `fetch` for a provider SDK that sends its requests as batches: each request the SDK makes
 * (the exact body it would send live) waits in a queue; after a short quiet time the queue goes
 * to the provider's batch API as one batch, journaled by id; the batch is looked at every
 * `pollMs` with its progress on the console; once it has ended, each request gets the reply its
 * live call would have had, and the SDK reads it as if it had come live. A request whose id is in
 * a batch an earlier process sent and never read waits for that batch instead of being sent again.
 *
 * Failures stay per request: an item the batch could not answer (an error, expiry) fails only its
 * own call, which the batched model then makes live.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CallFailure, classifyFailure } from '../failure.ts';
import { type BatchApi, type BatchResult, batchApi, batchRoute, keptHeaders } from './batch-apis.ts';
import type { BatchJournal, SentBatch } from './batch-journal.ts';

export interface BatchTransportOptions {
  /** How messages name the role: `model.target`. */
  label: string;
  /** The HTTP client of the batch endpoints. */
  fetch: typeof fetch;
  /** Where batches are journaled (none: a stopped process cannot take its batches up). */
  journal?: BatchJournal;
  pollMs: number;
  /** Quiet time after the last request before the queue is sent. */
  windowMs?: number;
  /** Most requests in one batch (OpenAI takes 50,000, Anthropic 100,000). */
  maxItems?: number;
  say: (message: string) => void;
  /** The run's stop: the waits for batches end with it, and the batches stay open for the next process. */
  stop?: AbortSignal;
}

interface Waiter {
  resolve(response: Response): void;
  reject(err: unknown): void;
}

/** Requests of one endpoint and key, waiting to go as a batch. */
interface Queue {
  route: NonNullable<ReturnType<typeof batchRoute>>;
  headers: Record<string, string>;
  items: Map<string, { body: string; waiters: Set<Waiter> }>;
  timer?: ReturnType<typeof setTimeout>;
  first: number;
}

/** A batch at the provider, with the requests of this process that wait for it. */
interface Tracked {
  id: string;
  api: BatchApi;
  waiters: Map<string, Set<Waiter>>;
  polling: boolean;
}

const WINDOW_MS = 250;
const MAX_ITEMS = 10_000;
/** A quiet time never holds a queue longer than this many windows. */
const MAX_WINDOWS = 20;
const SAY_EVERY_MS = 60_000;

/** A request's id in a batch: its endpoint and body (Anthropic allows 64 characters of [A-Za-z0-9_-]). */
export function customIdOf(endpoint: string, body: string): string {
  return `so_${createHash('sha256').update(`${endpoint}\n${body}`).digest('hex').slice(0, 48)}`;
}

function elapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`;
}

export class BatchTransport {
  private readonly queues = new Map<string, Queue>();
  private readonly tracked = new Map<string, Tracked>();
  /** How many requests of each body this process has made. */
  private readonly made = new Map<string, number>();
  /** The journal's open batches, by the ids of their requests. */
  private readonly journaled = new Map<string, SentBatch>();

  readonly fetch: typeof fetch = (input, init) => this.request(input, init);

  constructor(private readonly o: BatchTransportOptions) {
    for (const b of o.journal?.openBatches() ?? []) for (const id of b.custom_ids) this.journaled.set(id, b);
  }

  private request(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    const route = input instanceof Request ? undefined : batchRoute(String(input));
    if (!route || (init.method ?? 'GET') !== 'POST' || typeof init.body !== 'string') return this.o.fetch(input, init);
    const body = init.body;
    const customId = this.nth(customIdOf(route.endpoint, body));
    const headers = keptHeaders(init.headers);
    return new Promise<Response>((resolve, reject) => {
      const signal = init.signal ?? undefined;
      let remove = () => {};
      const waiter: Waiter = {
        resolve: (r) => {
          signal?.removeEventListener('abort', abort);
          resolve(r);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', abort);
          reject(e);
        },
      };
      function abort() {
        remove();
        reject(signal!.reason);
      }
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', abort, { once: true });
      const open = this.journaled.get(customId);
      if (open) {
        const tracked = this.track(
          open.id,
          batchApi({ api: open.api, base: open.base, endpoint: open.endpoint }, headers, this.o.fetch),
        );
        remove = this.wait(tracked, customId, waiter);
        this.poll(tracked);
        return;
      }
      remove = this.enqueue(route, headers, customId, body, waiter);
    });
  }

  /**
   * The id of a request: repeated samples of one item send the same body, and each must get an
   * answer of its own, so the n-th request of a body is told apart by its count (the same count
   * in a resumed process: a journaled batch is taken up by the same ids).
   */
  private nth(id: string): string {
    const n = this.made.get(id) ?? 0;
    this.made.set(id, n + 1);
    return n === 0 ? id : `${id}_${n}`;
  }

  private enqueue(
    route: Queue['route'],
    headers: Record<string, string>,
    customId: string,
    body: string,
    waiter: Waiter,
  ) {
    const key = JSON.stringify([route.api, route.base, route.endpoint, headers]);
    let queue = this.queues.get(key);
    if (!queue) {
      queue = { route, headers, items: new Map(), first: Date.now() };
      this.queues.set(key, queue);
    }
    const item = queue.items.get(customId) ?? { body, waiters: new Set<Waiter>() };
    queue.items.set(customId, item);
    item.waiters.add(waiter);
    const windowMs = this.o.windowMs ?? WINDOW_MS;
    clearTimeout(queue.timer);
    const full = queue.items.size >= (this.o.maxItems ?? MAX_ITEMS);
    const held = Date.now() - queue.first >= windowMs * MAX_WINDOWS;
    const q = queue;
    if (full || held) void this.send(key, q);
    else q.timer = setTimeout(() => void this.send(key, q), windowMs);
    return () => {
      item.waiters.delete(waiter);
      if (item.waiters.size === 0) q.items.delete(customId);
    };
  }

  private async send(key: string, queue: Queue): Promise<void> {
    if (this.queues.get(key) === queue) this.queues.delete(key);
    clearTimeout(queue.timer);
    const items = [...queue.items].filter(([, i]) => i.waiters.size > 0);
    if (items.length === 0) return;
    const api = batchApi(queue.route, queue.headers, this.o.fetch);
    let id: string;
    try {
      id = await api.submit(
        items.map(([customId, i]) => ({ customId, body: i.body })),
        this.o.stop,
      );
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      this.o.say(
        `${this.o.label}: a batch of ${items.length} calls could not be sent (${why}); they are made one by one at the live price`,
      );
      const failure = classifyFailure(err, this.o.label) ?? new CallFailure(`${this.o.label}: ${why}`, 'server');
      for (const [, i] of items) for (const w of i.waiters) w.reject(failure);
      return;
    }
    this.o.journal?.sent({
      id,
      api: queue.route.api,
      base: queue.route.base,
      endpoint: queue.route.endpoint,
      custom_ids: items.map(([customId]) => customId),
    });
    this.o.say(
      `${this.o.label}: ${items.length} calls sent as batch ${id} (${api.name === 'openai' ? "OpenAI's Batch API" : "Anthropic's Message Batches"}, half price, answered within 24 h); looking at it every ${this.o.pollMs / 1000} s. Ctrl-C stops the wait; the same command takes the batch up again`,
    );
    const tracked = this.track(id, api);
    for (const [customId, i] of items) for (const w of i.waiters) this.wait(tracked, customId, w);
    this.poll(tracked);
  }

  private track(id: string, api: BatchApi): Tracked {
    let t = this.tracked.get(id);
    if (!t) {
      t = { id, api, waiters: new Map(), polling: false };
      this.tracked.set(id, t);
    }
    return t;
  }

  /** Adds a waiter to a batch; returns how to take it off again (its call was aborted). */
  private wait(t: Tracked, customId: string, waiter: Waiter): () => void {
    const set = t.waiters.get(customId) ?? new Set<Waiter>();
    t.waiters.set(customId, set);
    set.add(waiter);
    return () => {
      set.delete(waiter);
      if (set.size === 0) t.waiters.delete(customId);
    };
  }

  /** Looks at a batch until it has ended (or nobody waits for it any more), then hands out its results. */
  private poll(t: Tracked): void {
    if (t.polling) return;
    t.polling = true;
    void this.pollLoop(t).finally(() => {
      t.polling = false;
    });
  }

  private async pollLoop(t: Tracked): Promise<void> {
    const { label, pollMs, say } = this.o;
    const started = Date.now();
    let said = 0;
    let lastFinished = -1;
    while (t.waiters.size > 0) {
      try {
        await sleep(pollMs, undefined, this.o.stop ? { signal: this.o.stop } : {});
      } catch {
        return; // the run stops: the batch stays open in the journal
      }
      if (t.waiters.size === 0) return;
      let results: Map<string, BatchResult>;
      try {
        const p = await t.api.progress(t.id, this.o.stop);
        if (p.refused) {
          this.o.journal?.ended(t.id);
          say(`${label}: batch ${t.id} was refused (${p.refused}); its calls are made one by one at the live price`);
          this.settle(t, new Map());
          return;
        }
        if (!p.ended) {
          if (p.finished !== lastFinished || Date.now() - said >= SAY_EVERY_MS) {
            say(
              `${label}: batch ${t.id}: ${p.finished} of ${p.total} answered after ${elapsed(Date.now() - started)}; waiting for the rest`,
            );
            said = Date.now();
            lastFinished = p.finished;
          }
          continue;
        }
        results = await t.api.results(t.id, this.o.stop);
      } catch (err) {
        if (this.o.stop?.aborted) return;
        const failure = classifyFailure(err, label);
        if (failure && ['auth', 'not_found', 'bad_request'].includes(failure.kind)) {
          say(
            `${label}: batch ${t.id} cannot be read (${failure.message}); its calls are made one by one at the live price`,
          );
          this.settle(t, new Map());
          return;
        }
        say(
          `${label}: could not look at batch ${t.id} (${err instanceof Error ? err.message : String(err)}); looking again in ${pollMs / 1000} s`,
        );
        continue;
      }
      this.o.journal?.ended(t.id);
      const { answered, failed } = this.settle(t, results);
      say(
        `${label}: batch ${t.id} ended after ${elapsed(Date.now() - started)}: ${answered} answered at the batch price${failed ? `; ${failed} failed and are made again one by one at the live price` : ''}`,
      );
      return;
    }
  }

  /** Hands each waiting request its result; a request without one fails (and is made live). */
  private settle(t: Tracked, results: Map<string, BatchResult>): { answered: number; failed: number } {
    this.tracked.delete(t.id);
    let answered = 0;
    let failed = 0;
    for (const [customId, waiters] of t.waiters) {
      this.journaled.delete(customId);
      const r = results.get(customId);
      const ok = r && 'status' in r && r.status >= 200 && r.status < 300;
      if (ok) answered++;
      else failed++;
      for (const w of waiters) {
        if (r && 'status' in r)
          w.resolve(new Response(r.body, { status: r.status, headers: { 'content-type': 'application/json' } }));
        else
          w.reject(
            new CallFailure(
              `${this.o.label}: batch ${t.id} has no answer for this call (${r?.missing ?? 'not in its results'})`,
              'server',
            ),
          );
      }
    }
    t.waiters.clear();
    return { answered, failed };
  }
}
