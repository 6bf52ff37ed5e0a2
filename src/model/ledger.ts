/**
 * The ledger: every model call the run makes, with its purpose, model, tokens, latency, retries
 * and cost, appended to the run's `calls.jsonl` as it completes. Totals per stage feed the step
 * records, the summary and the budget. On resume, the recorded responses are replayed instead of
 * calling again: what was paid for once is not paid for twice.
 *
 * Long replies are stored once in the run's `blobs/` and referenced from their line. Memory holds
 * each call without its reply; a reply to replay is kept as its compact line until it is used.
 *
 * So that a resumed run counts as an uninterrupted one: each call is tagged with the training step
 * it is made for (`attribution.ts`), and a step's usage is that of its own calls, whichever process
 * made them; a replay of a call made for the same step is that call (counted once), a replay of
 * another step's call stands for a new call answered from the record, and counts like a cache
 * hit. A call admitted to a provider is journaled in `calls.sent.jsonl` (its id) before it goes:
 * one that never came back (the process died with it in flight) counts against the limits as sent.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AppendFile, jsonLines } from '../run/atomic.ts';
import { BlobMissingError, BlobStore, fromJournalLine, toJournalLine } from '../run/blobs.ts';
import type { StageUsage } from '../run/records.ts';
import type { AgentTrace } from './harness/trace.ts';
import { currentWork, stepWork } from './attribution.ts';
import type { Role, ToolCall, Usage } from './types.ts';
import { round } from '../util/round.ts';

export interface CallRecord {
  time: string;
  key: string;
  role: Role;
  model: string;
  purpose: string;
  usage: Usage;
  latency_ms: number;
  retries: number;
  /** provider: paid now; cache: answered by the response cache; journal: replayed from this run's record. */
  from: 'provider' | 'cache' | 'journal';
  /** USD; null when the model's price is unknown. */
  cost_usd: number | null;
  error?: string;
  response?: { text: string; parsed?: unknown; toolCalls?: ToolCall[]; trace?: AgentTrace };
  /** The rollout job (on a worker) this call was made for. */
  job?: string;
  /** The call's id in the journal (lines of earlier versions have none). */
  id?: string;
  /** A replay: the id of the recorded call whose answer it took. */
  replay_of?: string;
  /** What the call was made for (`step 3`, `baseline`, …: `attribution.ts`). */
  work?: string;
  /** Answered through the provider's batch API, at its discount. */
  batch?: true;
}

/** Input tokens of some calls, those read from the providers' prompt caches, those written to them, and the read share. */
export interface CacheShare {
  input: number;
  cached: number;
  written: number;
  share: number;
}
const emptyShare = (): CacheShare => ({ input: 0, cached: 0, written: 0, share: 0 });

export interface Totals {
  /** Calls that reached a provider (the ones that cost). */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  /** Input tokens written to the providers' prompt caches. */
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** USD of calls with a known price. */
  costUsd: number;
  /** Provider calls whose price is unknown (then `costUsd` is a lower bound). */
  unpricedCalls: number;
}

/** What a `calls.jsonl` line must hold to count and replay (older lines have the same fields). */
const CallLineSchema = z
  .object({
    key: z.string(),
    purpose: z.string(),
    from: z.enum(['provider', 'cache', 'journal']),
    usage: z.object({ input: z.number(), output: z.number(), cached: z.number(), reasoning: z.number() }).loose(),
    cost_usd: z.number().nullable(),
    error: z.string().optional(),
    response: z.object({ text: z.string().nullable() }).loose().optional(),
    job: z.string().optional(),
    id: z.string().optional(),
    replay_of: z.string().optional(),
    work: z.string().optional(),
  })
  .loose();

/** A call admitted to a provider, journaled before it goes; its record in `calls.jsonl` follows with the same id. */
const SentLineSchema = z.object({ id: z.string() }).loose();

/** Where the calls admitted to a provider are journaled, beside the ledger's file. */
export const sentFile = (ledgerFile: string) => ledgerFile.replace(/(\.jsonl)?$/, '.sent.jsonl');

/** A short id for a call, unique within a run. */
const callId = () => randomBytes(6).toString('hex');

/** Only the reply goes to blobs: the rest of a line stays readable by anything that counts calls. */
const REPLY = '/response/';
/** An agent's trace is many short strings: stored whole when long. */
const WHOLE = ['trace'];

const emptyTotals = (): Totals => ({
  calls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  costUsd: 0,
  unpricedCalls: 0,
});

export class Ledger {
  /** Every call of the run, without its reply: those of earlier processes (read from the file) first. */
  private readonly records: CallRecord[] = [];
  /** Replies recorded by earlier processes, per request key, as their stored lines (JSON, long strings in blobs). */
  private readonly replay = new Map<string, string[]>();
  /** Recorded calls by id, for what a replay counts as. */
  private readonly byId = new Map<string, CallRecord>();
  /** Calls an earlier process sent and never recorded (it died with them in flight). */
  private readonly lost: number = 0;
  /** Worker jobs whose calls are recorded (by this process or an earlier one). */
  private readonly jobs = new Set<string>();
  private readonly running = emptyTotals();
  private counted = 0;
  private readonly out?: AppendFile;
  private readonly sent?: AppendFile;
  private readonly blobs?: BlobStore;

  constructor(file?: string) {
    if (!file) return;
    this.out = new AppendFile(file);
    this.sent = new AppendFile(sentFile(file));
    this.blobs = BlobStore.beside(file);
    const unanswered = new Set<string>();
    for (const { value } of jsonLines<Record<string, unknown>>(sentFile(file))) {
      const sent = SentLineSchema.safeParse(value);
      if (sent.success) unanswered.add(sent.data.id);
    }
    for (const { value, text } of jsonLines<Record<string, unknown>>(file)) {
      const parsed = CallLineSchema.safeParse(value);
      if (!parsed.success) continue;
      const { response, blobs: _refs, ...call } = parsed.data;
      if (response && !call.error) {
        // Lines of earlier versions hold the reply inline: it moves to blobs here.
        const moved = value.blobs ? undefined : toJournalLine(value, this.blobs, REPLY, WHOLE);
        const list = this.replay.get(call.key) ?? [];
        list.push(moved?.blobs ? JSON.stringify(moved) : text);
        this.replay.set(call.key, list);
      }
      if (call.job) this.jobs.add(call.job);
      if (call.id) unanswered.delete(call.id);
      this.add(call as unknown as CallRecord);
    }
    this.lost = unanswered.size;
    this.running.calls = this.lost;
  }

  private add(rec: CallRecord): void {
    this.records.push(rec);
    if (rec.id) this.byId.set(rec.id, rec);
  }

  /** Calls sent by earlier processes of the run whose answers never came back (counted in `totals`). */
  get lostCalls(): number {
    return this.lost;
  }

  /** Journals a call as admitted to a provider, before it goes; returns its id for the record that follows. */
  sending(rec: Pick<CallRecord, 'key' | 'role' | 'model' | 'purpose'>): string {
    const id = callId();
    this.sent?.append(JSON.stringify({ id, key: rec.key, role: rec.role, model: rec.model, purpose: rec.purpose }));
    return id;
  }

  /**
   * A recorded response for this request, consumed once (so repeated identical calls replay in
   * turn). A reply whose blob is gone is not replayed: the call is made again.
   */
  takeReplay(key: string): CallRecord | undefined {
    const list = this.replay.get(key);
    for (let stored = list?.shift(); stored !== undefined; stored = list?.shift()) {
      try {
        return fromJournalLine<CallRecord>(JSON.parse(stored), this.blobs!);
      } catch (err) {
        if (!(err instanceof BlobMissingError)) throw err;
      }
    }
    return undefined;
  }

  record(rec: CallRecord): void {
    const { response: _reply, ...call } = rec;
    this.add(call);
    this.out?.append(JSON.stringify(this.blobs ? toJournalLine(rec, this.blobs, REPLY, WHOLE) : rec));
  }

  /**
   * Records the calls of a worker's job, unless they are recorded already: a trainer killed after
   * recording them but before keeping the rollout's score takes the same finished job again when
   * it resumes, and its calls were paid once.
   */
  recordJob(job: string, calls: CallRecord[]): void {
    if (this.jobs.has(job)) return;
    // Recorded for the work that waited for the job (a worker knows no step).
    const work = currentWork();
    for (const call of calls) this.record({ ...call, job, ...(work === undefined ? {} : { work }) });
    this.jobs.add(job);
  }

  /** Totals of this run across all its processes (earlier ones count against the budget too). */
  totals(): Totals {
    // Records are only ever appended: the sum is carried forward (the budget asks before every call).
    for (; this.counted < this.records.length; this.counted++) addTo(this.running, this.records[this.counted]!);
    return { ...this.running };
  }

  /** A position in the records, for per-step totals. */
  mark(): number {
    return this.records.length;
  }

  /** Usage per purpose of the calls since position `since` (all calls when omitted). */
  byPurpose(since = 0): Record<string, StageUsage> {
    return usagePerPurpose(this.records.slice(since), (r) => this.counts(r));
  }

  /** Of each role's input, and of each stage's (purpose) within it, what the providers' prompt caches read and wrote. */
  cacheShares(): Record<string, CacheShare & { by_stage: Record<string, CacheShare> }> {
    const out: Record<string, CacheShare & { by_stage: Record<string, CacheShare> }> = {};
    const add = (s: CacheShare, u: Usage) => {
      s.input += u.input;
      s.cached += u.cached;
      s.written += u.cacheWrite ?? 0;
      s.share = s.input ? round(s.cached / s.input, 4) : 0;
    };
    for (const r of this.records) {
      if (r.from !== 'provider') continue;
      const role = (out[r.role] ??= { ...emptyShare(), by_stage: {} });
      add(role, r.usage);
      add((role.by_stage[r.purpose] ??= emptyShare()), r.usage);
    }
    return out;
  }

  /** Usage per purpose of the calls made for training step `step`, by this process and earlier ones. */
  forStep(step: number): Record<string, StageUsage> {
    return usagePerPurpose(
      this.records.filter((r) => r.work === stepWork(step)),
      (r) => this.counts(r),
    );
  }

  /**
   * Whether a record counts as a call: a replay of a call made for the same work is that call
   * (counted where it was made); a replay of other work's call is a call of its own, answered
   * from the record like a cache hit. Replays of untagged calls (earlier versions) do not count.
   */
  private counts(r: CallRecord): boolean {
    if (r.from !== 'journal') return true;
    const original = r.replay_of === undefined ? undefined : this.byId.get(r.replay_of);
    return original?.work !== undefined && r.work !== undefined && original.work !== r.work;
  }

  close(): void {
    this.out?.close();
    this.sent?.close();
  }

  /** Every record of the run, without replies (tests and reports). */
  all(): readonly CallRecord[] {
    return this.records;
  }
}

/** Usage per purpose of `records`; a purpose with no counted call is listed with zeros. */
function usagePerPurpose(records: CallRecord[], counts: (r: CallRecord) => boolean): Record<string, StageUsage> {
  const out: Record<string, StageUsage> = {};
  for (const r of records) {
    const s = (out[r.purpose] ??= {
      calls: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      cached_tokens: 0,
      reasoning_tokens: 0,
      total_tokens: 0,
      cost_usd: 0,
    });
    if (!counts(r)) continue;
    s.calls += 1;
    s.prompt_tokens += r.usage.input;
    s.completion_tokens += r.usage.output;
    s.cached_tokens = (s.cached_tokens ?? 0) + r.usage.cached;
    // Only where a provider wrote to its prompt cache, so that other runs' records keep the original's fields.
    if (r.usage.cacheWrite) s.cache_write_tokens = (s.cache_write_tokens ?? 0) + r.usage.cacheWrite;
    s.reasoning_tokens = (s.reasoning_tokens ?? 0) + r.usage.reasoning;
    s.total_tokens = (s.total_tokens ?? 0) + r.usage.input + r.usage.output;
    s.cost_usd = s.cost_usd === null || r.cost_usd === null ? null : (s.cost_usd ?? 0) + r.cost_usd;
  }
  return out;
}

function addTo(t: Totals, r: CallRecord): void {
  if (r.from !== 'provider') return;
  t.calls += 1;
  t.inputTokens += r.usage.input;
  t.outputTokens += r.usage.output;
  t.cachedTokens += r.usage.cached;
  t.cacheWriteTokens += r.usage.cacheWrite ?? 0;
  t.reasoningTokens += r.usage.reasoning;
  if (r.cost_usd === null) t.unpricedCalls += 1;
  else t.costUsd += r.cost_usd;
}

export function sumUsage(stages: Record<string, StageUsage>): StageUsage {
  const total: StageUsage = {
    calls: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    reasoning_tokens: 0,
    total_tokens: 0,
    cost_usd: 0,
  };
  for (const s of Object.values(stages)) {
    total.calls += s.calls;
    total.prompt_tokens += s.prompt_tokens;
    total.completion_tokens += s.completion_tokens;
    total.cached_tokens = (total.cached_tokens ?? 0) + (s.cached_tokens ?? 0);
    if (s.cache_write_tokens) total.cache_write_tokens = (total.cache_write_tokens ?? 0) + s.cache_write_tokens;
    total.reasoning_tokens = (total.reasoning_tokens ?? 0) + (s.reasoning_tokens ?? 0);
    total.total_tokens = (total.total_tokens ?? 0) + (s.total_tokens ?? s.prompt_tokens + s.completion_tokens);
    total.cost_usd =
      total.cost_usd === null || s.cost_usd === null || s.cost_usd === undefined ? null : total.cost_usd! + s.cost_usd;
  }
  return total;
}
