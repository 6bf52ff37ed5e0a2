/**
 * The response cache: model answers in SQLite, shared by every run on the machine, keyed by the
 * full request (backend, model, base URL, every parameter, the messages with the content of
 * local images, and the sample index). Only successful answers are stored, and without the keys in
 * use (a reply that echoes one keeps `****` in its place, as the run's files do). Several processes may
 * read and write at once (WAL journal, a short busy timeout). Modes: `read_write`; `read_only`
 * (use, never add); `off`; `replay` (a call missing from the cache is an error, so a recorded run
 * re-runs offline, exactly and for free).
 *
 * The cache never costs an answer: one it cannot read is a miss, one it cannot store (another
 * process holding the write lock) is a warning, and the answer goes on to the ledger as any other.
 * Identical requests in flight at the same time make one provider call.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { scrubSecrets } from '../config/redact.ts';
import { requestKey } from './request-key.ts';
import { validReply } from './structured.ts';
import type { AgentTrace } from './harness/trace.ts';
import {
  FatalModelError,
  ModelConfigError,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type Message,
  type ToolCall,
  type Usage,
} from './types.ts';

export type CacheMode = 'read_write' | 'read_only' | 'off' | 'replay';

/** skillopt's directory under the user's cache directory: XDG_CACHE_HOME, or the platform's. */
export function userCacheDir(environment: Record<string, string | undefined> = process.env): string {
  const base =
    environment.XDG_CACHE_HOME ||
    (process.platform === 'darwin'
      ? path.join(os.homedir(), 'Library', 'Caches')
      : process.platform === 'win32'
        ? (environment.LOCALAPPDATA ?? path.join(os.homedir(), 'AppData', 'Local'))
        : path.join(os.homedir(), '.cache'));
  return path.join(base, 'skillopt');
}

/** The default cache file. */
export function defaultCachePath(environment: Record<string, string | undefined> = process.env): string {
  return path.join(userCacheDir(environment), 'responses.sqlite');
}

interface Stored {
  text: string;
  toolCalls?: ToolCall[];
  usage: Usage;
  /** What an agent target did to give this answer. */
  trace?: AgentTrace;
}

/**
 * How long a write waits for another process's lock. The wait blocks the whole process (SQLite
 * calls are synchronous), so it is short, and after a failed write the cache is not written for
 * `WRITE_PAUSE_MS`.
 */
const BUSY_TIMEOUT_MS = 500;
const WRITE_PAUSE_MS = 30_000;

export class ResponseCache {
  private readonly db: Database.Database;
  private readonly getStmt: Database.Statement<[string], { response: string }>;
  private readonly putStmt: Database.Statement<[string, string, string, string]>;
  private readonly putMany: (rows: [string, string, string, string][]) => void;
  /**
   * Answers queued by `store`, by key, written together at the end of the event loop's turn;
   * shared by every cache of this process on the same file, so that one sees what another has
   * queued but not written yet.
   */
  private readonly pending: Map<string, [string, string, string, string]>;
  private static readonly queued = new Map<string, Map<string, [string, string, string, string]>>();
  private flushScheduled = false;
  private onFailure: ((reason: string) => void) | undefined;
  private writesPausedUntil = 0;

  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const shared = ResponseCache.queued.get(path.resolve(file));
    this.pending = shared ?? new Map();
    if (!shared) ResponseCache.queued.set(path.resolve(file), this.pending);
    // Loaded when a cache is opened: a run that caches nothing (the simulator) does not load SQLite.
    const Sqlite = createRequire(import.meta.url)('better-sqlite3') as typeof Database;
    try {
      this.db = new Sqlite(file, { timeout: BUSY_TIMEOUT_MS });
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.exec(
        'CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, created TEXT NOT NULL, response TEXT NOT NULL)',
      );
    } catch (err) {
      throw new ModelConfigError(
        `the response cache ${file} cannot be opened (${(err as Error).message}): move it aside (it only saves answers already paid for; a new one is made), or set cache.path elsewhere, or cache.mode: off`,
      );
    }
    this.getStmt = this.db.prepare('SELECT response FROM responses WHERE key = ?');
    this.putStmt = this.db.prepare(
      'INSERT OR REPLACE INTO responses (key, model, created, response) VALUES (?, ?, ?, ?)',
    );
    this.putMany = this.db.transaction((rows: [string, string, string, string][]) => {
      for (const row of rows) this.putStmt.run(...row);
    });
  }

  get(key: string): Stored | undefined {
    const queued = this.pending.get(key)?.[3];
    if (queued !== undefined) return JSON.parse(queued) as Stored;
    const row = this.getStmt.get(key);
    return row ? (JSON.parse(row.response) as Stored) : undefined;
  }

  /** Writes an answer now, in a transaction of its own. */
  put(key: string, model: string, value: Stored): void {
    this.putStmt.run(key, model, new Date().toISOString(), stored(value));
  }

  /**
   * Queues an answer: those queued in one turn of the event loop are written in one transaction
   * (one commit instead of one per answer). When the cache cannot take them (another process
   * holds its write lock), `failed` hears why, and later answers are dropped without a word
   * while the cache rests.
   */
  store(key: string, model: string, value: Stored, failed: (reason: string) => void): void {
    if (Date.now() < this.writesPausedUntil) return;
    this.pending.set(key, [key, model, new Date().toISOString(), stored(value)]);
    this.onFailure = failed;
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes the queued answers. */
  flush(): void {
    this.flushScheduled = false;
    if (this.pending.size === 0 || !this.db.open) return;
    const rows = [...this.pending.values()];
    this.pending.clear();
    try {
      this.putMany(rows);
    } catch (err) {
      this.writesPausedUntil = Date.now() + WRITE_PAUSE_MS;
      this.onFailure?.((err as Error).message);
    }
  }

  count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM responses').get() as { n: number }).n;
  }

  close(): void {
    this.flush();
    this.db.close();
  }
}

/** An answer as the cache keeps it: without the keys in use (a reply may echo one), like every file of a run. */
const stored = (value: Stored): string => scrubSecrets(JSON.stringify(value));

const isLocalImage = (p: { type: string; image?: string }) =>
  p.type === 'image' && !/^(data:|https?:)/i.test(p.image ?? '');

/** Local image files enter the key by content, so a changed file is a different request. */
function withImageDigests(messages: Message[]): unknown[] {
  return messages.map((m) => {
    if (m.role !== 'user' || typeof m.content === 'string') return m;
    return {
      ...m,
      content: m.content.map((p) => {
        if (p.type !== 'image' || !isLocalImage(p)) return p;
        const file = p.image.startsWith('file://') ? new URL(p.image).pathname : p.image;
        try {
          return { ...p, sha256: createHash('sha256').update(fs.readFileSync(file)).digest('hex') };
        } catch {
          return p;
        }
      }),
    };
  });
}

/** The cache key of a request to a model whose fixed settings are `identity`. */
export function cacheKey(modelId: string, req: ChatRequest, identity: Record<string, unknown>): string {
  const localImages = req.messages.some(
    (m) => m.role === 'user' && typeof m.content !== 'string' && m.content.some(isLocalImage),
  );
  return requestKey(modelId, localImages ? { ...req, messages: withImageDigests(req.messages) as Message[] } : req, {
    settings: identity,
  });
}

export class CachedModel implements ChatModel {
  readonly id: string;
  readonly agentic?: boolean;
  readonly readsSkillFiles?: boolean;
  readonly skillFiles?: ChatModel['skillFiles'];
  /** Provider calls under way, by cache key: an identical request joins one instead of paying again. */
  private readonly inFlight = new Map<string, Promise<ChatResponse>>();

  constructor(
    private readonly inner: ChatModel,
    private readonly cache: ResponseCache,
    private readonly mode: CacheMode,
    /** The role's settings that shape answers: backend, base URL, temperature, effort, options, … */
    private readonly identity: Record<string, unknown>,
    /** Where a cache that cannot be read or written says so. */
    private readonly warn: (message: string) => void = () => {},
  ) {
    this.id = inner.id;
    this.agentic = inner.agentic;
    this.readsSkillFiles = inner.readsSkillFiles;
    this.skillFiles = inner.skillFiles;
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    if (this.mode === 'off') return this.inner.complete(req);
    const key = cacheKey(this.id, req, this.identity);
    const hit = this.lookup(key);
    if (hit) {
      const res: ChatResponse = { ...hit, latencyMs: 0, retries: 0, from: 'cache', costUsd: 0 };
      // Validated anew: the schema of today decides, not the one the answer was first read with.
      if (req.schema) {
        const parsed = validReply(req.schema, hit.text);
        if (parsed.ok) res.parsed = parsed.value;
      }
      return res;
    }
    if (this.mode === 'replay') {
      throw new FatalModelError(
        `cache.mode is replay and the response cache (${this.cache.file}) has no answer for this ${req.purpose} call to ${this.id}: the run asks for something the recorded run did not (set cache.mode to read_write to call the provider)`,
      );
    }
    const running = this.inFlight.get(key);
    if (running) {
      const started = performance.now();
      const res = await running;
      return { ...res, latencyMs: performance.now() - started, retries: 0, from: 'cache', costUsd: 0 };
    }
    const call = this.inner.complete(req);
    this.inFlight.set(key, call);
    let res: ChatResponse;
    try {
      res = await call;
    } finally {
      this.inFlight.delete(key);
    }
    if (this.mode === 'read_write') {
      this.cache.store(
        key,
        this.id,
        {
          text: res.text,
          ...(res.toolCalls ? { toolCalls: res.toolCalls } : {}),
          usage: res.usage,
          ...(res.trace ? { trace: res.trace } : {}),
        },
        (reason) =>
          this.warn(
            `the response cache (${this.cache.file}) could not store an answer (${reason}); the answer is kept in the run's calls.jsonl, and the cache is not written for the next ${WRITE_PAUSE_MS / 1000} s`,
          ),
      );
    }
    return res;
  }

  /** The cached answer, or undefined: a cache that cannot be read now is a miss. */
  private lookup(key: string): Stored | undefined {
    try {
      return this.cache.get(key);
    } catch (err) {
      if (this.mode === 'replay') throw err;
      this.warn(
        `the response cache (${this.cache.file}) could not be read (${(err as Error).message}); the call goes to the provider`,
      );
      return undefined;
    }
  }
}
