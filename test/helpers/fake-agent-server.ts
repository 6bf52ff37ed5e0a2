/**
 * A fake model server on 127.0.0.1 for the agent CLIs, speaking the streaming wire formats they
 * use: the Responses API as server-sent events (Codex, and the Copilot CLI with a custom
 * provider; a non-streaming JSON reply when the request does not ask to stream) and the Anthropic
 * Messages API as server-sent events (Claude Code). A script decides each reply from the
 * conversation so far: a tool call for the agent to run, a final text, or an HTTP error. Every
 * request is recorded, so a test can check what reached the model (the skill's text, the task,
 * the output of a tool). WebSocket upgrades get 426, which makes Codex fall back to HTTP at once.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after } from 'node:test';
import { countTokens } from '../../src/skill/document.ts';
import { anthropicBody, errorBody, responsesBody, type Recorded } from './fake-provider.ts';

export interface Turn {
  wire: 'responses' | 'anthropic';
  /** Tool results already in the conversation (their outputs, in order): the turn number is their count. */
  toolOutputs: string[];
  /** Everything the request carries, as one string (system, instructions, messages, tools). */
  text: string;
  request: Recorded;
}

export type ScriptReply =
  | { text: string }
  | { tool: string; input: Record<string, unknown> }
  /** A Responses API output item given whole (a `tool_search_call`, a namespaced `function_call`). */
  | { item: Record<string, unknown> }
  | { status: number; message?: string; headers?: Record<string, string> };

export interface FakeAgentServer {
  url: string;
  requests: Recorded[];
  /** The model requests (Responses or Messages calls), in order. */
  turns: Turn[];
  close(): Promise<void>;
}

export interface FakeAgentOptions {
  /** Report each streamed request's input as the tokens of its body, as a provider counts what it is sent; else a fixed usage. */
  countUsage?: boolean;
}

const USAGE = { input: 120, output: 8, cached: 20, reasoning: 0, cacheWrite: 0, cacheWrite1h: 0 };

function toolOutputs(wire: Turn['wire'], body: any): string[] {
  if (wire === 'responses') {
    const input: any[] = Array.isArray(body.input) ? body.input : [];
    return input
      .filter((i) => i.type === 'function_call_output')
      .map((i) => (typeof i.output === 'string' ? i.output : JSON.stringify(i.output)));
  }
  const out: string[] = [];
  for (const m of body.messages ?? []) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    for (const part of m.content) {
      if (part.type !== 'tool_result') continue;
      out.push(
        typeof part.content === 'string' ? part.content : (part.content ?? []).map((c: any) => c.text ?? '').join(''),
      );
    }
  }
  return out;
}

let counter = 0;
const nextId = (prefix: string) => `${prefix}_${(++counter).toString(16).padStart(8, '0')}`;

function responsesItem(reply: ScriptReply): any {
  if ('item' in reply) return { id: nextId('item'), status: 'completed', ...reply.item };
  if ('tool' in reply)
    return {
      id: nextId('fc'),
      type: 'function_call',
      status: 'completed',
      arguments: JSON.stringify(reply.input),
      call_id: nextId('call'),
      name: reply.tool,
    };
  return {
    id: nextId('msg'),
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', annotations: [], text: (reply as { text: string }).text }],
  };
}

/** The Responses API's event stream for one output item, as OpenAI sends it. */
function responsesStream(res: http.ServerResponse, model: string, reply: ScriptReply, u: typeof USAGE): void {
  let seq = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const id = nextId('resp');
  const base = {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model,
    output: [] as any[],
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: null as any,
  };
  send('response.created', { response: { ...base, status: 'in_progress' } });
  send('response.in_progress', { response: { ...base, status: 'in_progress' } });
  const item = responsesItem(reply);
  if (item.type === 'message') {
    const text = item.content[0].text as string;
    send('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    send('response.content_part.added', {
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', annotations: [], text: '' },
    });
    for (const delta of text.match(/[\s\S]{1,12}/g) ?? [])
      send('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta, logprobs: [] });
    send('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text, logprobs: [] });
    send('response.content_part.done', {
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', annotations: [], text },
    });
  } else if (item.type !== 'function_call') {
    send('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress' } });
  } else {
    send('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } });
    send('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: item.arguments });
    send('response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: item.arguments });
  }
  send('response.output_item.done', { output_index: 0, item });
  const usage = {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cached },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: u.input + u.output,
  };
  send('response.completed', { response: { ...base, status: 'completed', output: [item], usage } });
  res.end();
}

/** The Messages API's event stream for one content block, as Anthropic sends it. */
function messagesStream(res: http.ServerResponse, model: string, reply: ScriptReply, u: typeof USAGE): void {
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const usage = {
    input_tokens: u.input - u.cached,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: u.cached,
    output_tokens: 1,
  };
  send('message_start', {
    message: {
      id: nextId('msg'),
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });
  if ('tool' in reply) {
    send('content_block_start', {
      index: 0,
      content_block: { type: 'tool_use', id: nextId('toolu'), name: reply.tool, input: {} },
    });
    send('content_block_delta', {
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.input) },
    });
  } else {
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    send('ping', {});
    for (const text of (reply as { text: string }).text.match(/[\s\S]{1,12}/g) ?? [])
      send('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
  }
  send('content_block_stop', { index: 0 });
  send('message_delta', {
    delta: { stop_reason: 'tool' in reply ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: u.output },
  });
  send('message_stop', {});
  res.end();
}

export async function startFakeAgentServer(
  script: (turn: Turn) => ScriptReply | Promise<ScriptReply>,
  options: FakeAgentOptions = {},
): Promise<FakeAgentServer> {
  const started = performance.now();
  const requests: Recorded[] = [];
  const turns: Turn[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let body: any = {};
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      body = { unparsed: raw };
    }
    const wire = url.pathname.endsWith('/responses')
      ? 'responses'
      : url.pathname.endsWith('/messages')
        ? 'anthropic'
        : undefined;
    const rec: Recorded = {
      wire: wire ?? 'chat',
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
      at: performance.now() - started,
    };
    requests.push(rec);
    if (req.headers.upgrade) {
      res.writeHead(426).end();
      return;
    }
    if (req.method === 'HEAD' || req.method === 'GET' || !wire) {
      res
        .writeHead(req.method === 'HEAD' ? 200 : 404, { 'content-type': 'application/json' })
        .end(req.method === 'HEAD' ? undefined : '{}');
      return;
    }
    const turn: Turn = { wire, toolOutputs: toolOutputs(wire, body), text: raw, request: rec };
    turns.push(turn);
    let reply: ScriptReply;
    try {
      reply = await script(turn);
    } catch (err) {
      reply = { status: 500, message: `script failed: ${(err as Error).message}` };
    }
    if ('status' in reply) {
      res
        .writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) })
        .end(JSON.stringify(errorBody(wire, reply.status, reply.message ?? `fake ${reply.status}`)));
      return;
    }
    const model = String(body.model ?? 'fake-model');
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      // Counted: each request's input is the tokens of what the CLI sent (its prompt, tools and the conversation).
      const usage = options.countUsage ? { ...USAGE, input: countTokens(raw), cached: 0 } : USAGE;
      if (wire === 'responses') responsesStream(res, model, reply, usage);
      else messagesStream(res, model, reply, usage);
      return;
    }
    if ('item' in reply) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify(errorBody(wire, 400, 'a whole output item is only sent streamed')));
      return;
    }
    const asReply =
      'tool' in reply
        ? { toolCalls: [{ id: nextId('call'), name: reply.tool, arguments: reply.input }] }
        : { text: reply.text };
    const payload = wire === 'responses' ? responsesBody(rec, asReply, USAGE) : anthropicBody(rec, asReply, USAGE);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    turns,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Starts fake servers for one test file; they are closed when its tests are done. */
export function fakeAgentServers(): (
  script: (turn: Turn) => ScriptReply | Promise<ScriptReply>,
  options?: FakeAgentOptions,
) => Promise<FakeAgentServer> {
  const open: FakeAgentServer[] = [];
  after(() => Promise.all(open.map((s) => s.close())));
  return async (script, options) => {
    const server = await startFakeAgentServer(script, options);
    open.push(server);
    return server;
  };
}
