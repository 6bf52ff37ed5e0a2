/**
 * The model wrapper that writes every call into the ledger (`ledger.ts`): a call this run already
 * made is answered from its record; a new one is journaled as sent, then recorded with its reply or
 * its error.
 */
import { redactText } from '../config/redact.ts';
import { currentWork } from './attribution.ts';
import type { Ledger } from './ledger.ts';
import { carryIdentity, requestKey } from './request-key.ts';
import { RunStop, type ChatModel, type ChatRequest, type ChatResponse, type Role } from './types.ts';

/** Records every call of `inner` in the ledger, and replays this run's recorded answers first. */
export class LedgerModel implements ChatModel {
  readonly id: string;
  readonly agentic?: boolean;
  readonly readsSkillFiles?: boolean;
  readonly skillFiles?: ChatModel['skillFiles'];

  constructor(
    private readonly inner: ChatModel,
    private readonly ledger: Ledger,
    private readonly role: Role,
  ) {
    this.id = inner.id;
    this.agentic = inner.agentic;
    this.readsSkillFiles = inner.readsSkillFiles;
    this.skillFiles = inner.skillFiles;
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    const key = requestKey(this.id, req);
    const work = currentWork();
    const base = {
      time: '',
      key,
      role: this.role,
      model: this.id,
      purpose: req.purpose,
      ...(work === undefined ? {} : { work }),
    };
    const replayed = this.ledger.takeReplay(key);
    if (replayed?.response) {
      const usage = replayed.usage;
      this.ledger.record({
        ...base,
        time: new Date().toISOString(),
        usage,
        latency_ms: 0,
        retries: 0,
        from: 'journal',
        cost_usd: 0,
        ...(replayed.id ? { replay_of: replayed.id } : {}),
      });
      return { ...replayed.response, usage, latencyMs: 0, retries: 0, from: 'journal', costUsd: 0 };
    }
    const started = performance.now();
    let id: string | undefined;
    const sent = () => (id = this.ledger.sending(base));
    try {
      const res = await this.inner.complete(carryIdentity(req, { ...req, onSent: sent }));
      const from = res.from ?? 'provider';
      this.ledger.record({
        ...base,
        ...(id ? { id } : {}),
        time: new Date().toISOString(),
        usage: res.usage,
        latency_ms: Math.round(res.latencyMs),
        retries: res.retries ?? 0,
        from,
        cost_usd: from === 'provider' ? (res.costUsd === undefined ? null : res.costUsd) : 0,
        ...(res.batched ? { batch: true as const } : {}),
        response: {
          text: res.text,
          ...(res.parsed !== undefined ? { parsed: res.parsed } : {}),
          ...(res.toolCalls ? { toolCalls: res.toolCalls } : {}),
          ...(res.trace ? { trace: res.trace } : {}),
        },
      });
      return res;
    } catch (err) {
      // A stop refused the call before it was sent, or gave it up while it waited: remade on resume.
      if (err instanceof RunStop) throw err;
      this.ledger.record({
        ...base,
        ...(id ? { id } : {}),
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
