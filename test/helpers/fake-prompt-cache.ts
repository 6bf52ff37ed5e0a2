/**
 * The providers' prompt caches as they document them, for the fake provider: what a request
 * reads from the cache and what it writes, in the usage fields the real APIs report.
 *
 * - Anthropic (Messages): only up to a `cache_control` breakpoint (on a tool, a system block or a
 *   message part; the prefix is everything before it in the order tools, system, messages), and
 *   only a prefix of at least the model's minimum (1,024 tokens; 2,048 for Sonnet 4.6 and the
 *   Haiku 3 models; 4,096 for Opus 4.5 and 4.6 and Haiku 4.5). A read hits the longest earlier
 *   breakpoint's prefix still alive (5 minutes since its last use, or an hour with `ttl: "1h"`);
 *   what lies between it and the last breakpoint is written.
 * - OpenAI (Chat Completions, Responses): by itself, for prompts of 1,024 tokens or more, on the
 *   machine a request is routed to by its `prompt_cache_key` and the start of its prompt; the
 *   cached part is the longest prefix shared with an earlier prompt on that machine, counted from
 *   1,024 tokens in steps of 128, alive 5 minutes.
 *
 * A prefix written by a request can be read once that request's reply is out (requests sent at
 * the same moment all miss, as they do at the providers). Tokens are counted as 4 characters of
 * the request's JSON each: an emulation of the mechanics, not of a tokenizer.
 */
import { createHash } from 'node:crypto';

const tokens = (text: string) => Math.ceil(text.length / 4);
const hash = (text: string) => createHash('sha256').update(text).digest('hex');

const FIVE_MINUTES = 5 * 60_000;
const HOUR = 60 * 60_000;

function anthropicMinimum(model: string): number {
  if (/^claude-(opus-4-[56]|haiku-4-5)/.test(model)) return 4096;
  if (/^claude-(sonnet-4-6|3-5-haiku|3-haiku)/.test(model)) return 2048;
  return 1024;
}

export interface CacheUsage {
  /** Every input token of the request. */
  input: number;
  /** Read from the cache. */
  cached: number;
  /** Written to the cache. */
  cacheWrite: number;
  /** Of those written, for an hour. */
  cacheWrite1h: number;
}

interface Block {
  text: string;
  breakpoint?: { ttl: number };
}

function anthropicBlocks(body: any): Block[] {
  const blocks: Block[] = [];
  const add = (part: any) => {
    const ttl = part?.cache_control?.ttl === '1h' ? HOUR : FIVE_MINUTES;
    blocks.push({ text: JSON.stringify(part), ...(part?.cache_control ? { breakpoint: { ttl } } : {}) });
  };
  for (const tool of body.tools ?? []) add(tool);
  if (typeof body.system === 'string') add({ type: 'text', text: body.system });
  else for (const part of body.system ?? []) add(part);
  for (const m of body.messages ?? []) {
    if (typeof m.content === 'string') add({ role: m.role, text: m.content });
    else for (const part of m.content ?? []) add({ role: m.role, ...part });
  }
  return blocks;
}

/** The items of an OpenAI prompt in order, as text: tools, instructions, messages or input items. */
function openaiText(body: any): string {
  const items = [
    ...(body.tools ?? []),
    ...(body.instructions ? [{ instructions: body.instructions }] : []),
    ...(body.messages ?? []),
    ...(Array.isArray(body.input) ? body.input : body.input !== undefined ? [body.input] : []),
  ];
  return items.map((i) => JSON.stringify(i)).join('\n');
}

export class FakePromptCaches {
  private readonly anthropic = new Map<string, { ready: number; until: number }>();
  private readonly machines = new Map<string, { text: string; ready: number; until: number }[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The cache usage of a request that arrives now and is answered in `replyInMs`. */
  usage(wire: 'chat' | 'responses' | 'anthropic', body: any, replyInMs = 0): CacheUsage {
    return wire === 'anthropic' ? this.anthropicUsage(body, replyInMs) : this.openaiUsage(body, replyInMs);
  }

  private anthropicUsage(body: any, replyInMs: number): CacheUsage {
    const blocks = anthropicBlocks(body);
    const input = tokens(blocks.map((b) => b.text).join(''));
    const minimum = anthropicMinimum(String(body.model ?? ''));
    const now = this.now();
    let prefix = '';
    const points: { key: string; tokens: number; ttl: number }[] = [];
    for (const b of blocks) {
      prefix += b.text;
      if (b.breakpoint && tokens(prefix) >= minimum)
        points.push({ key: hash(`${body.model}\n${prefix}`), tokens: tokens(prefix), ttl: b.breakpoint.ttl });
    }
    const none = { input, cached: 0, cacheWrite: 0, cacheWrite1h: 0 };
    if (points.length === 0) return none;
    const alive = (key: string) => {
      const e = this.anthropic.get(key);
      return e !== undefined && e.ready <= now && now < e.until;
    };
    const hit = [...points].reverse().find((p) => alive(p.key));
    const cached = hit?.tokens ?? 0;
    const last = points[points.length - 1]!;
    for (const p of points) {
      const ready = alive(p.key) ? this.anthropic.get(p.key)!.ready : now + replyInMs;
      this.anthropic.set(p.key, { ready, until: now + replyInMs + p.ttl });
    }
    const cacheWrite = last.tokens - cached;
    return { input, cached, cacheWrite, cacheWrite1h: last.ttl === HOUR ? cacheWrite : 0 };
  }

  private openaiUsage(body: any, replyInMs: number): CacheUsage {
    const text = openaiText(body);
    const input = tokens(text);
    const none = { input, cached: 0, cacheWrite: 0, cacheWrite1h: 0 };
    if (input < 1024) return none;
    const now = this.now();
    const machine = hash(`${body.prompt_cache_key ?? ''}\n${text.slice(0, 256 * 4)}`);
    const alive = (this.machines.get(machine) ?? []).filter((e) => e.until > now);
    let shared = 0;
    for (const e of alive.filter((e) => e.ready <= now)) {
      let i = 0;
      const n = Math.min(e.text.length, text.length);
      while (i < n && e.text.charCodeAt(i) === text.charCodeAt(i)) i++;
      shared = Math.max(shared, i);
    }
    const sharedTokens = Math.floor(shared / 4);
    const cached = sharedTokens < 1024 ? 0 : Math.min(input, 1024 + Math.floor((sharedTokens - 1024) / 128) * 128);
    alive.push({ text, ready: now + replyInMs, until: now + replyInMs + FIVE_MINUTES });
    this.machines.set(machine, alive.slice(-64));
    return { ...none, cached };
  }
}
