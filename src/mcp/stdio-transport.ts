/**
 * The MCP server's stdio transport: one JSON-RPC message a line on stdin, one a line on stdout.
 * A line longer than the limit is never held in memory: its bytes are dropped as they arrive
 * and, once its end comes, the request gets a JSON-RPC error (`Invalid Request`, with its id when
 * the line's start names one) while the server goes on serving. A line that is not JSON, or not
 * a JSON-RPC message, gets the protocol's error too, instead of no answer at all.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The largest request line accepted, in bytes: a tool's arguments are a few kilobytes. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
/** How much of an oversized line is kept to find its id. */
const HEAD_BYTES = 4096;

type RequestId = string | number | null;

/** The id of a request, read from the start of its line (an oversized line is never parsed whole). */
function idFromHead(head: string): RequestId {
  const m = /"id"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")/.exec(head);
  if (!m) return null;
  try {
    return JSON.parse(m[1]!) as string | number;
  } catch {
    return null;
  }
}

export interface StdioOptions {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  maxMessageBytes?: number;
  /** A line for the server's log (stderr). */
  log?: (line: string) => void;
}

export class LineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;

  private readonly input: NodeJS.ReadableStream;
  private readonly output: NodeJS.WritableStream;
  private readonly max: number;
  private readonly log: (line: string) => void;
  private chunks: Buffer[] = [];
  private size = 0;
  /** Bytes dropped of the current line, once it is over the limit; its start is kept in `head`. */
  private dropped = 0;
  private head = '';
  private closed = false;

  constructor(o: StdioOptions = {}) {
    this.input = o.input ?? process.stdin;
    this.output = o.output ?? process.stdout;
    this.max = o.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    this.log = o.log ?? ((line) => process.stderr.write(`skillopt mcp: ${line}\n`));
  }

  private readonly onData = (chunk: Buffer | string) => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (let end = data.indexOf(0x0a); end >= 0; end = data.indexOf(0x0a)) {
      this.take(data.subarray(0, end));
      this.endLine();
      data = data.subarray(end + 1);
    }
    if (data.length) this.take(data);
  };

  private readonly onEnd = () => void this.close();
  private readonly onError = (err: Error) => this.onerror?.(err);

  /** Adds bytes to the current line, or drops them once it is over the limit. */
  private take(part: Buffer): void {
    if (this.dropped > 0) {
      this.dropped += part.length;
      return;
    }
    if (this.size + part.length <= this.max) {
      this.chunks.push(part);
      this.size += part.length;
      return;
    }
    const line = Buffer.concat([...this.chunks, part]);
    this.head = line.subarray(0, HEAD_BYTES).toString('utf8');
    this.dropped = line.length;
    this.chunks = [];
    this.size = 0;
  }

  private endLine(): void {
    if (this.dropped > 0) {
      const bytes = this.dropped;
      this.dropped = 0;
      const id = idFromHead(this.head);
      this.head = '';
      this.log(`refused a message of ${bytes} bytes (the limit is ${this.max})`);
      void this.reply(id, INVALID_REQUEST, `message too large: ${bytes} bytes, the limit is ${this.max} bytes`);
      return;
    }
    const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.size = 0;
    if (!line.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      this.log('refused a line that is not JSON');
      void this.reply(null, PARSE_ERROR, 'parse error: a message is one line of JSON');
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(json);
    if (!message.success) {
      const id = json && typeof json === 'object' && 'id' in json ? (json.id as RequestId) : null;
      this.log('refused a line that is not a JSON-RPC message');
      void this.reply(
        typeof id === 'string' || typeof id === 'number' ? id : null,
        INVALID_REQUEST,
        'invalid request: not a JSON-RPC 2.0 message',
      );
      return;
    }
    this.onmessage?.(message.data);
  }

  private reply(id: RequestId, code: number, message: string): Promise<void> {
    return this.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`);
  }

  private write(text: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.output.write(text)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('error', this.onError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('error', this.onError);
    this.input.pause();
    this.chunks = [];
    this.onclose?.();
  }
}
