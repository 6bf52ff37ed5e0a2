/**
 * A fake model provider on 127.0.0.1 that speaks the real wire formats: OpenAI Chat Completions
 * (`/v1/chat/completions`, also as an OpenAI-compatible server with vLLM's extra fields), the
 * Responses API (`/v1/responses`), Azure deployment paths with `api-version`
 * (`/openai/deployments/<name>/chat/completions?api-version=…`) and Anthropic Messages
 * (`/v1/messages`). It records every request, answers through a responder of the test's design,
 * and injects faults on demand: an HTTP status (429 with or without `retry-after`, 500, 503,
 * 401, …), a hung connection, a reset, malformed JSON, an empty reply, a reply whose headers come
 * at once and whose body then drips a byte every 100 ms. Like the real APIs, it
 * answers 400 to a reasoning effort sent to a model without reasoning (gpt-4o, gpt-4.1, …) and to
 * a thinking budget sent to a Claude model without extended thinking.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BatchOptions, FakeBatches } from './fake-batches.ts';
import { FakePromptCaches } from './fake-prompt-cache.ts';

export type Wire = 'chat' | 'responses' | 'anthropic';

export interface Recorded {
  wire: Wire;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** ms since the server started, when the request arrived. */
  at: number;
  /** ms since the server started, when its reply was sent (or its connection closed); unset while open. */
  done?: number;
}

export interface Reply {
  text?: string;
  toolCalls?: { id: string; name: string; arguments: unknown }[];
  /** `input` counts every input token: cache reads (`cached`) and cache writes (`cacheWrite`, of which `cacheWrite1h` for an hour) included. */
  usage?: {
    input: number;
    output: number;
    cached?: number;
    reasoning?: number;
    cacheWrite?: number;
    cacheWrite1h?: number;
  };
  /** The finish reason in the wire's words (`length`, `max_output_tokens` for Responses, which then reports `incomplete`; `max_tokens` for Anthropic). */
  finish?: string;
  /** Extra response headers (e.g. rate-limit state). */
  headers?: Record<string, string>;
}

export type Fault =
  | { status: number; headers?: Record<string, string>; message?: string; code?: string; param?: string }
  | { kind: 'hang' | 'reset' | 'malformed' | 'empty' | 'drip' };

export interface FakeOptions {
  /** The answer to a request (default: echo of the last user text). */
  respond?: (req: Recorded) => Reply | Promise<Reply>;
  /** Decides a fault for a request (after `faults` is used up); undefined = answer normally. */
  fault?: (req: Recorded, index: number) => Fault | undefined;
  /** Delay before answering, ms. */
  latencyMs?: number;
  /** The vLLM extra fields on Chat Completions replies. */
  vllm?: boolean;
  /** Emulate the providers' prompt caches (`fake-prompt-cache.ts`): the input usage comes from the request. */
  caching?: boolean;
  /** The caches' clock (ms), for their time to live. */
  clock?: () => number;
  /** How the batch endpoints behave (`fake-batches.ts`): how long a batch takes, which items expire. */
  batches?: BatchOptions;
}

export interface FakeProvider {
  url: string;
  requests: Recorded[];
  /** Faults for the next requests, in order, one each. */
  faults: Fault[];
  /** Requests in flight now, and the most at once. */
  inFlight(): number;
  maxInFlight(): number;
  /** The batch endpoints' state: the batches made and every request to those endpoints. */
  batches: FakeBatches;
  /** Usage summed over the replies actually sent. */
  usageSent(): {
    input: number;
    output: number;
    cached: number;
    cacheWrite: number;
    reasoning: number;
    replies: number;
  };
  close(): Promise<void>;
}

function lastUserText(wire: Wire, body: any): string {
  const items: any[] =
    wire === 'responses'
      ? Array.isArray(body.input)
        ? body.input
        : [{ role: 'user', content: body.input }]
      : (body.messages ?? []);
  for (let i = items.length - 1; i >= 0; i--) {
    const m = items[i];
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    return (m.content as any[])
      .filter((p) => p.type === 'text' || p.type === 'input_text')
      .map((p) => p.text)
      .join('');
  }
  return '';
}

export function textOfUser(r: Recorded): string {
  return lastUserText(r.wire, r.body);
}

function chatBody(r: Recorded, reply: Reply, usage: Required<NonNullable<Reply['usage']>>, vllm: boolean): unknown {
  const message: any = { role: 'assistant', content: reply.text ?? null };
  if (reply.toolCalls?.length) {
    message.tool_calls = reply.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
  }
  if (vllm) Object.assign(message, { reasoning_content: null, refusal: null });
  const choice: any = {
    index: 0,
    message,
    logprobs: null,
    finish_reason: reply.finish ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop'),
  };
  if (vllm) choice.stop_reason = null;
  const body: any = {
    id: `chatcmpl-${r.at}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: r.body.model,
    choices: [choice],
    usage: {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
      // Gateways that bill cache writes report them as cache_write_tokens; OpenAI itself does not.
      prompt_tokens_details:
        vllm && !usage.cached
          ? null
          : { cached_tokens: usage.cached, ...(usage.cacheWrite ? { cache_write_tokens: usage.cacheWrite } : {}) },
      completion_tokens_details: { reasoning_tokens: usage.reasoning },
    },
  };
  if (vllm)
    Object.assign(body, {
      prompt_logprobs: null,
      kv_transfer_params: null,
      service_tier: null,
      system_fingerprint: null,
    });
  return body;
}

export function responsesBody(r: Recorded, reply: Reply, usage: Required<NonNullable<Reply['usage']>>): unknown {
  const output: any[] = [];
  // A reply stopped by a limit (`finish` is the reason, e.g. max_output_tokens) is `incomplete`;
  // a reasoning model that spent every token thinking leaves only its reasoning item.
  const cutOff = reply.finish !== undefined && !reply.text;
  if (cutOff) output.push({ id: 'rs_1', type: 'reasoning', summary: [] });
  else if (reply.text !== undefined) {
    output.push({
      type: 'message',
      id: 'msg_1',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: reply.text, annotations: [] }],
    });
  }
  for (const c of reply.toolCalls ?? []) {
    output.push({
      type: 'function_call',
      id: `fc_${c.id}`,
      call_id: c.id,
      name: c.name,
      arguments: JSON.stringify(c.arguments),
      status: 'completed',
    });
  }
  return {
    id: `resp_${r.at}`,
    object: 'response',
    created_at: 1_700_000_000,
    status: reply.finish ? 'incomplete' : 'completed',
    model: r.body.model,
    output,
    incomplete_details: reply.finish ? { reason: reply.finish } : null,
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: usage.cached },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: usage.reasoning },
      total_tokens: usage.input + usage.output,
    },
  };
}

export function anthropicBody(r: Recorded, reply: Reply, usage: Required<NonNullable<Reply['usage']>>): unknown {
  const content: any[] = [];
  // Stopped by max_tokens while thinking: only the (unfinished) thinking block.
  if (reply.finish === 'max_tokens' && !reply.text)
    content.push({ type: 'thinking', thinking: 'Let me work through', signature: 'EqQBCkYIBxgCKkB' });
  else if (reply.text !== undefined) content.push({ type: 'text', text: reply.text });
  for (const c of reply.toolCalls ?? []) content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments });
  return {
    id: `msg_${r.at}`,
    type: 'message',
    role: 'assistant',
    model: r.body.model,
    content,
    stop_reason: reply.finish ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    // Anthropic's input_tokens are those neither read from nor written to the cache.
    usage: {
      input_tokens: usage.input - usage.cached - usage.cacheWrite,
      cache_creation_input_tokens: usage.cacheWrite,
      cache_read_input_tokens: usage.cached,
      cache_creation: {
        ephemeral_5m_input_tokens: usage.cacheWrite - usage.cacheWrite1h,
        ephemeral_1h_input_tokens: usage.cacheWrite1h,
      },
      output_tokens: usage.output,
      service_tier: 'standard',
    },
  };
}

export function errorBody(wire: Wire, status: number, message: string, code?: string, param?: string): unknown {
  if (wire === 'anthropic') {
    const type =
      status === 429
        ? 'rate_limit_error'
        : status === 401
          ? 'authentication_error'
          : status >= 500
            ? 'api_error'
            : 'invalid_request_error';
    return { type: 'error', error: { type, message } };
  }
  return {
    error: {
      message,
      type: status >= 500 ? 'server_error' : 'invalid_request_error',
      code: code ?? null,
      param: param ?? null,
    },
  };
}

const NO_REASONING = /^(gpt-4|gpt-3\.5|chatgpt-|gpt-5-chat)/;
const NO_THINKING = /^claude-(3-5-|3-haiku|3-opus|3-sonnet)/;

/** The 400 the real API gives to an option the model does not take. */
function unsupportedOption(wire: Wire, body: any): Fault | undefined {
  const model = String(body.model ?? '');
  if (wire === 'chat' && body.reasoning_effort !== undefined && NO_REASONING.test(model)) {
    return {
      status: 400,
      message: "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
      code: 'unsupported_parameter',
      param: 'reasoning_effort',
    };
  }
  if (wire === 'responses' && body.reasoning?.effort !== undefined && NO_REASONING.test(model)) {
    return {
      status: 400,
      message: "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
      code: 'unsupported_parameter',
      param: 'reasoning.effort',
    };
  }
  if (wire === 'anthropic' && body.thinking?.type === 'enabled' && NO_THINKING.test(model))
    return { status: 400, message: `'${model}' does not support thinking.` };
  return undefined;
}

/** What the fake answers to one request, whatever carries it. */
type Outcome =
  | { status: number; headers: Record<string, string>; body: string }
  | { kind: 'hang' | 'reset' }
  /** Status 200 and the headers at once, then the body a byte every 100 ms; `done` once it is closed. */
  | { kind: 'drip'; headers: Record<string, string>; body: string; done: () => void };

/** The fake's state and its answer to a request, shared by the HTTP server and the in-process `fetch`. */
function fakeCore(options: FakeOptions) {
  const started = performance.now();
  const requests: Recorded[] = [];
  const faults: Fault[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const sent = { input: 0, output: 0, cached: 0, cacheWrite: 0, reasoning: 0, replies: 0 };
  const caches = options.caching ? new FakePromptCaches(options.clock) : undefined;
  const json = (status: number, payload: unknown, headers: Record<string, string> = {}): Outcome => ({
    status,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(payload),
  });

  async function handle(
    method: string,
    href: string,
    headers: http.IncomingHttpHeaders,
    bodyText: string,
    onClosed: (done: () => void) => void,
  ): Promise<Outcome> {
    const url = new URL(href, 'http://127.0.0.1');
    const p = url.pathname;
    if (batches.handles(p)) return batches.handle(method, url, headers, Buffer.from(bodyText, 'utf8'));
    const wire: Wire | undefined = p.endsWith('/chat/completions')
      ? 'chat'
      : p.endsWith('/responses')
        ? 'responses'
        : p.endsWith('/messages')
          ? 'anthropic'
          : undefined;
    let body: any = {};
    try {
      body = bodyText ? JSON.parse(bodyText) : {};
    } catch {
      body = { unparsed: bodyText };
    }
    if (!wire) return json(404, { error: { message: `no route ${p}` } });
    const rec: Recorded = {
      wire,
      method,
      path: p,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
      at: performance.now() - started,
    };
    const index = requests.length;
    requests.push(rec);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const done = () => {
      inFlight--;
      rec.done = performance.now() - started;
    };
    try {
      const fault = faults.shift() ?? options.fault?.(rec, index) ?? unsupportedOption(wire, body);
      // What the request reads and writes is decided when it arrives; its writes are readable once it is answered.
      const cacheUsage = fault ? undefined : caches?.usage(wire, body, options.latencyMs ?? 0);
      if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
      if (fault && 'kind' in fault) {
        if (fault.kind === 'hang') {
          onClosed(done);
          return { kind: 'hang' };
        }
        if (fault.kind === 'reset') {
          done();
          return { kind: 'reset' };
        }
        if (fault.kind === 'malformed') {
          done();
          return {
            status: 200,
            headers: { 'content-type': 'application/json' },
            body: '{"id": "x", "choices": [ {"index": 0, "message": ',
          };
        }
      }
      if (fault && 'status' in fault) {
        done();
        return json(
          fault.status,
          errorBody(wire, fault.status, fault.message ?? `fake ${fault.status}`, fault.code, fault.param),
          fault.headers,
        );
      }
      const reply: Reply =
        fault?.kind === 'empty'
          ? { text: '' }
          : await (options.respond ?? ((r) => ({ text: `echo: ${lastUserText(r.wire, r.body)}` })))(rec);
      const usage = {
        input: 20,
        output: 10,
        cached: 0,
        reasoning: 0,
        cacheWrite: 0,
        cacheWrite1h: 0,
        ...reply.usage,
        ...cacheUsage,
      };
      const payload =
        wire === 'chat'
          ? chatBody(rec, reply, usage, options.vllm ?? false)
          : wire === 'responses'
            ? responsesBody(rec, reply, usage)
            : anthropicBody(rec, reply, usage);
      if (fault?.kind === 'drip')
        return {
          kind: 'drip',
          headers: { 'content-type': 'application/json', ...(reply.headers ?? {}) },
          body: JSON.stringify(payload),
          done,
        };
      if (fault?.kind !== 'empty') {
        sent.input += usage.input;
        sent.output += usage.output;
        sent.cached += usage.cached;
        sent.cacheWrite += usage.cacheWrite;
        sent.reasoning += usage.reasoning;
        sent.replies++;
      }
      done();
      return json(200, payload, reply.headers);
    } catch (err) {
      done();
      return { status: 500, headers: {}, body: String(err) };
    }
  }

  const batches = new FakeBatches(async (path, headers, body) => {
    const outcome = await handle('POST', path, headers, body, () => {});
    return 'kind' in outcome ? { status: 500, headers: {}, body: '{"error":{"message":"fake fault"}}' } : outcome;
  }, options.batches);
  const view = {
    batches,
    requests,
    faults,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    usageSent: () => ({ ...sent }),
  };
  return { handle, view };
}

export async function startFakeProvider(options: FakeOptions = {}): Promise<FakeProvider> {
  const { handle, view } = fakeCore(options);
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const outcome = await handle(
      req.method ?? '',
      req.url ?? '/',
      req.headers,
      Buffer.concat(chunks).toString('utf8'),
      (done) => req.socket.once('close', done),
    );
    if ('kind' in outcome) {
      if (outcome.kind === 'reset') req.socket.destroy();
      if (outcome.kind === 'drip') {
        res.writeHead(200, outcome.headers);
        const bytes = Buffer.from(outcome.body);
        let sentBytes = 0;
        const timer = setInterval(() => {
          if (sentBytes < bytes.length) res.write(bytes.subarray(sentBytes, ++sentBytes));
          else res.end();
        }, 100);
        res.once('close', () => {
          clearInterval(timer);
          outcome.done();
        });
      }
      return;
    }
    res.writeHead(outcome.status, outcome.headers).end(outcome.body);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ...view,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The same fake provider without a server: a `fetch` that answers in-process, for the tests of
 * what is above the wire (the ledger, the response cache, structured replies), given to the
 * model stack as `StackOptions.fetch`. A reset fails the call as a dropped connection does; a
 * hang waits for the call's abort. `url` is only a base for the roles' `base_url`.
 */
/** A body that comes a byte every 100 ms, until it is read to the end, cancelled or aborted. */
function drip(body: string, done: () => void, signal: AbortSignal): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(body);
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    clearInterval(timer);
    done();
  };
  return new ReadableStream({
    start(controller) {
      let sent = 0;
      timer = setInterval(() => {
        if (sent < bytes.length) controller.enqueue(bytes.subarray(sent, ++sent));
        else {
          controller.close();
          stop();
        }
      }, 100);
      signal.addEventListener(
        'abort',
        () => {
          stop();
          controller.error(signal.reason);
        },
        { once: true },
      );
    },
    cancel: stop,
  });
}

export type InProcessFake = Omit<FakeProvider, 'close'> & { fetch: typeof fetch };

export function fakeProviderFetch(options: FakeOptions = {}): InProcessFake {
  const { handle, view } = fakeCore(options);
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const headers: Record<string, string> = {
      host: new URL(request.url).host,
      ...Object.fromEntries([...request.headers].map(([k, v]) => [k.toLowerCase(), v])),
    };
    let closed: (() => void) | undefined;
    const outcome = await handle(
      request.method,
      `${new URL(request.url).pathname}${new URL(request.url).search}`,
      headers,
      await request.text(),
      (done) => (closed = done),
    );
    if ('kind' in outcome) {
      if (outcome.kind === 'reset')
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
        });
      if (outcome.kind === 'drip')
        return new Response(drip(outcome.body, outcome.done, request.signal), {
          status: 200,
          headers: outcome.headers,
        });
      return new Promise<Response>((_, reject) => {
        const abort = () => {
          closed?.();
          reject(request.signal.reason ?? new DOMException('aborted', 'AbortError'));
        };
        if (request.signal.aborted) abort();
        else request.signal.addEventListener('abort', abort, { once: true });
      });
    }
    return new Response(outcome.body, { status: outcome.status, headers: outcome.headers });
  };
  return { url: 'http://fake-provider.invalid', ...view, fetch: fetchImpl as typeof fetch };
}
