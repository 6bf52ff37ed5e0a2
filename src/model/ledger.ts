/**
 * The ledger: every model call the run makes, with its purpose, model, tokens, latency, retries
 * and cost, appended to the run's `calls.jsonl` as it completes. Totals per stage feed the step
 * records, the summary and the budget. On resume, the recorded responses are replayed instead of
 * calling again: what was paid for once is not paid for twice.
 */
import { redactText } from '../config/redact.ts';
import { AppendFile, readJsonLines } from '../run/atomic.ts';
import type { StageUsage } from '../run/records.ts';
import { requestKey } from './request-key.ts';
import { RunStop, type ChatModel, type ChatRequest, type ChatResponse, type Role, type ToolCall, type Usage } from './types.ts';

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
  response?: { text: string; parsed?: unknown; toolCalls?: ToolCall[] };
}

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

const emptyTotals = (): Totals => ({ calls: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: 0, unpricedCalls: 0 });

export class Ledger {
  /** Every call of the run: those of earlier processes (read from the file) first. */
  private readonly records: CallRecord[] = [];
  private readonly replay = new Map<string, CallRecord[]>();
  private readonly running = emptyTotals();
  private counted = 0;
  private readonly out?: AppendFile;

  constructor(file?: string) {
    if (!file) return;
    this.out = new AppendFile(file);
    for (const rec of readJsonLines<CallRecord>(file)) {
      if (rec.response && !rec.error) {
        const list = this.replay.get(rec.key) ?? [];
        list.push(rec);
        this.replay.set(rec.key, list);
      }
      this.records.push(rec);
    }
  }

  /** A recorded response for this request, consumed once (so repeated identical calls replay in turn). */
  takeReplay(key: string): CallRecord | undefined {
    const list = this.replay.get(key);
    return list?.shift();
  }

  record(rec: CallRecord): void {
    this.records.push(rec);
    this.out?.append(JSON.stringify(rec));
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

  /** Usage per purpose of the calls since `mark` (all calls when omitted). */
  byPurpose(since = 0): Record<string, StageUsage> {
    const out: Record<string, StageUsage> = {};
    for (const r of this.records.slice(since)) {
      const s = (out[r.purpose] ??= { calls: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, total_tokens: 0, cost_usd: 0 });
      if (r.from === 'journal') continue;
      s.calls += 1;
      s.prompt_tokens += r.usage.input;
      s.completion_tokens += r.usage.output;
      s.cached_tokens = (s.cached_tokens ?? 0) + r.usage.cached;
      s.reasoning_tokens = (s.reasoning_tokens ?? 0) + r.usage.reasoning;
      s.total_tokens = (s.total_tokens ?? 0) + r.usage.input + r.usage.output;
      s.cost_usd = s.cost_usd === null || r.cost_usd === null ? null : (s.cost_usd ?? 0) + r.cost_usd;
    }
    return out;
  }

  close(): void {
    this.out?.close();
  }

  /** Every record of the run (tests and reports). */
  all(): readonly CallRecord[] {
    return this.records;
  }
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
  const total: StageUsage = { calls: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, total_tokens: 0, cost_usd: 0 };
  for (const s of Object.values(stages)) {
    total.calls += s.calls;
    total.prompt_tokens += s.prompt_tokens;
    total.completion_tokens += s.completion_tokens;
    total.cached_tokens = (total.cached_tokens ?? 0) + (s.cached_tokens ?? 0);
    total.reasoning_tokens = (total.reasoning_tokens ?? 0) + (s.reasoning_tokens ?? 0);
    total.total_tokens = (total.total_tokens ?? 0) + (s.total_tokens ?? s.prompt_tokens + s.completion_tokens);
    total.cost_usd = total.cost_usd === null || s.cost_usd === null || s.cost_usd === undefined ? null : total.cost_usd! + s.cost_usd;
  }
  return total;
}

/** Records every call of `inner` in the ledger, and replays this run's recorded answers first. */
export class LedgerModel implements ChatModel {
  readonly id: string;

  constructor(
    private readonly inner: ChatModel,
    private readonly ledger: Ledger,
    private readonly role: Role,
  ) {
    this.id = inner.id;
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    const key = requestKey(this.id, req);
    const base = { time: '', key, role: this.role, model: this.id, purpose: req.purpose };
    const replayed = this.ledger.takeReplay(key);
    if (replayed?.response) {
      const usage = replayed.usage;
      this.ledger.record({ ...base, time: new Date().toISOString(), usage, latency_ms: 0, retries: 0, from: 'journal', cost_usd: 0 });
      return { ...replayed.response, usage, latencyMs: 0, retries: 0, from: 'journal', costUsd: 0 };
    }
    const started = performance.now();
    try {
      const res = await this.inner.complete(req);
      const from = res.from ?? 'provider';
      this.ledger.record({
        ...base,
        time: new Date().toISOString(),
        usage: res.usage,
        latency_ms: Math.round(res.latencyMs),
        retries: res.retries ?? 0,
        from,
        cost_usd: from === 'provider' ? (res.costUsd === undefined ? null : res.costUsd) : 0,
        response: { text: res.text, ...(res.parsed !== undefined ? { parsed: res.parsed } : {}), ...(res.toolCalls ? { toolCalls: res.toolCalls } : {}) },
      });
      return res;
    } catch (err) {
      // A stop refused the call before it was sent, or gave it up while it waited: remade on resume.
      if (err instanceof RunStop) throw err;
      this.ledger.record({
        ...base,
        time: new Date().toISOString(),
        usage: { input: 0, output: 0, cached: 0, reasoning: 0 },
        latency_ms: Math.round(performance.now() - started),
        retries: (err as { retries?: number }).retries ?? 0,
        from: 'provider',
        cost_usd: 0,
        // A provider may echo a key in its error.
        error: redactText(err instanceof Error ? `${err.name}: ${err.message}` : String(err)),
      });
      throw err;
    }
  }
}
