/**
 * The batch endpoints of the fake provider, in the real shapes:
 *
 * - OpenAI: `POST /v1/files` (multipart, purpose `batch`, a JSONL file of
 *   `{custom_id, method, url, body}` lines), `POST /v1/batches` (`input_file_id`, `endpoint`,
 *   `completion_window: 24h`), `GET /v1/batches/{id}` (status `validating` → `in_progress` →
 *   `completed`, `request_counts`), `GET /v1/files/{id}/content` (the output file:
 *   `{id, custom_id, response: {status_code, request_id, body}, error: null}`; the error file: the
 *   same with a failing status, or `response: null` and `error: {code: batch_expired, …}`). A
 *   batch with a repeated `custom_id`, a line for another endpoint, or two models ends `failed`
 *   with `errors.data`, as OpenAI's validation does.
 * - Anthropic: `POST /v1/messages/batches` (`{requests: [{custom_id, params}]}`; a `custom_id`
 *   outside `^[a-zA-Z0-9_-]{1,64}$` or repeated is a 400), `GET /v1/messages/batches/{id}`
 *   (`processing_status` `in_progress` → `ended`, `request_counts`, `results_url`), and the
 *   results: `{custom_id, result: {type: succeeded, message} | {type: errored, error} |
 *   {type: expired}}` lines.
 *
 * Each item is answered by the fake's own answer to the live request (its responder, faults and
 * prompt caches), so a batch's answers are the live ones.
 */
import type http from 'node:http';

export interface BatchOptions {
  /** How long a batch takes to end, ms (its items are answered meanwhile, in order). */
  takesMs?: number;
  /** Items the batch never gets to: they expire. */
  expire?: (customId: string, index: number) => boolean;
  /** Every OpenAI batch fails validation with this error (as when the organization's enqueued token limit is reached). */
  refuse?: { code: string; message: string };
}

/** What the fake answers to one HTTP request. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The live answer to an item's request: the fake's own handler. */
export type Live = (path: string, headers: http.IncomingHttpHeaders, body: string) => Promise<Answer>;

interface Item {
  customId: string;
  body: any;
}

interface FakeBatch {
  id: string;
  wire: 'openai' | 'anthropic';
  endpoint: string;
  items: Item[];
  created: number;
  /** Results by custom_id once answered; `expired` for the items never run. */
  results: Map<string, Answer | 'expired'>;
  ended: boolean;
  failedWith?: { code: string; message: string; line?: number }[];
  inputFileId?: string;
  outputFileId?: string;
  errorFileId?: string;
  origin: string;
}

/** A request to one of the batch endpoints, as it came (for tests of where keys go). */
export interface BatchCall {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

const json = (status: number, payload: unknown): Answer => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(payload),
});

const unix = (ms: number) => Math.floor(ms / 1000);
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

export class FakeBatches {
  readonly calls: BatchCall[] = [];
  readonly batches = new Map<string, FakeBatch>();
  private readonly files = new Map<string, { purpose: string; content: string; filename: string }>();
  private n = 0;

  constructor(
    private readonly live: Live,
    private readonly options: BatchOptions = {},
  ) {}

  handles(path: string): boolean {
    return (
      /\/(files|batches)(\/[^/]+)?(\/(content|results|cancel))?$/.test(path) && !path.endsWith('/chat/completions')
    );
  }

  async handle(method: string, url: URL, headers: http.IncomingHttpHeaders, raw: Buffer): Promise<Answer> {
    const p = url.pathname;
    this.calls.push({ method, path: p, headers });
    const origin = `http://${headers.host ?? '127.0.0.1'}`;
    let m: RegExpMatchArray | null;
    if (method === 'POST' && p.endsWith('/messages/batches')) return this.createAnthropic(raw, origin, p);
    if ((m = p.match(/\/messages\/batches\/([^/]+)\/results$/))) return this.anthropicResults(m[1]!);
    if ((m = p.match(/\/messages\/batches\/([^/]+)$/))) return this.anthropicBatch(m[1]!);
    if (method === 'POST' && p.endsWith('/files')) return this.upload(raw, String(headers['content-type'] ?? ''));
    if ((m = p.match(/\/files\/([^/]+)\/content$/))) {
      const file = this.files.get(m[1]!);
      return file
        ? { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: file.content }
        : json(404, { error: { message: `No such File object: ${m[1]}`, type: 'invalid_request_error' } });
    }
    if (method === 'POST' && p.endsWith('/batches')) return this.createOpenAI(raw, origin);
    if ((m = p.match(/\/batches\/([^/]+)$/))) return this.openaiBatch(m[1]!);
    return json(404, { error: { message: `no route ${method} ${p}` } });
  }

  private id(prefix: string): string {
    return `${prefix}${(++this.n).toString(36).padStart(6, '0')}${Math.random().toString(36).slice(2, 10)}`;
  }

  private async upload(raw: Buffer, contentType: string): Promise<Answer> {
    const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData();
    const file = form.get('file');
    const purpose = String(form.get('purpose') ?? '');
    if (!(file instanceof Blob) || !purpose)
      return json(400, { error: { message: "'file' and 'purpose' are required", type: 'invalid_request_error' } });
    const id = this.id('file-');
    const content = await file.text();
    const filename = (file as File).name ?? 'upload';
    this.files.set(id, { purpose, content, filename });
    return json(200, {
      id,
      object: 'file',
      bytes: Buffer.byteLength(content),
      created_at: unix(Date.now()),
      filename,
      purpose,
      status: 'processed',
      status_details: null,
    });
  }

  private async createOpenAI(raw: Buffer, origin: string): Promise<Answer> {
    const body = JSON.parse(raw.toString('utf8'));
    const input = this.files.get(body.input_file_id);
    if (input?.purpose !== 'batch')
      return json(400, {
        error: { message: `Invalid 'input_file_id': '${body.input_file_id}'.`, type: 'invalid_request_error' },
      });
    if (body.completion_window !== '24h')
      return json(400, {
        error: { message: "Invalid 'completion_window': only '24h' is supported.", type: 'invalid_request_error' },
      });
    const lines = input.content.split('\n').filter((l) => l.trim());
    const items: Item[] = [];
    const errors: { code: string; message: string; line?: number }[] = [];
    const seen = new Set<string>();
    const models = new Set<string>();
    lines.forEach((l, i) => {
      const line = JSON.parse(l);
      if (seen.has(line.custom_id))
        errors.push({
          code: 'duplicate_custom_id',
          message: 'The custom_id for this request is a duplicate of another request.',
          line: i + 1,
        });
      if (line.url !== body.endpoint)
        errors.push({
          code: 'mismatched_endpoint',
          message: `The url '${line.url}' does not match the batch's endpoint.`,
          line: i + 1,
        });
      seen.add(line.custom_id);
      models.add(line.body?.model);
      items.push({ customId: line.custom_id, body: line.body });
    });
    if (models.size > 1)
      errors.push({ code: 'mixed_models', message: 'A batch can only contain requests to a single model.' });
    if (this.options.refuse) errors.push(this.options.refuse);
    const batch = this.start('openai', body.endpoint, items, origin, errors);
    batch.inputFileId = body.input_file_id;
    return json(200, this.openaiView(batch));
  }

  private async createAnthropic(raw: Buffer, origin: string, path: string): Promise<Answer> {
    const body = JSON.parse(raw.toString('utf8'));
    const requests: any[] = body.requests ?? [];
    const seen = new Set<string>();
    for (const [i, r] of requests.entries()) {
      if (!CUSTOM_ID.test(String(r.custom_id ?? '')) || seen.has(r.custom_id))
        return json(400, {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$' and be unique`,
          },
        });
      seen.add(r.custom_id);
    }
    const endpoint = path.replace(/\/batches$/, '');
    const batch = this.start(
      'anthropic',
      endpoint,
      requests.map((r) => ({ customId: r.custom_id, body: r.params })),
      origin,
      [],
    );
    return json(200, this.anthropicView(batch));
  }

  private start(
    wire: FakeBatch['wire'],
    endpoint: string,
    items: Item[],
    origin: string,
    errors: FakeBatch['failedWith'] & {},
  ): FakeBatch {
    const batch: FakeBatch = {
      id: this.id(wire === 'openai' ? 'batch_' : 'msgbatch_'),
      wire,
      endpoint,
      items,
      created: Date.now(),
      results: new Map(),
      ended: false,
      origin,
    };
    this.batches.set(batch.id, batch);
    if (errors.length) {
      batch.failedWith = errors;
      batch.ended = true;
      return batch;
    }
    void this.run(batch);
    return batch;
  }

  /** Answers the items one by one, then ends the batch once it has taken `takesMs`. */
  private async run(batch: FakeBatch): Promise<void> {
    await new Promise((r) => setImmediate(r));
    for (const [index, item] of batch.items.entries()) {
      if (this.options.expire?.(item.customId, index)) batch.results.set(item.customId, 'expired');
      else
        batch.results.set(
          item.customId,
          await this.live(batch.endpoint, { 'content-type': 'application/json' }, JSON.stringify(item.body)),
        );
    }
    const rest = (this.options.takesMs ?? 0) - (Date.now() - batch.created);
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    if (batch.wire === 'openai') this.writeOpenAIFiles(batch);
    batch.ended = true;
  }

  private writeOpenAIFiles(batch: FakeBatch): void {
    const out: string[] = [];
    const errors: string[] = [];
    for (const item of batch.items) {
      const r = batch.results.get(item.customId)!;
      const id = this.id('batch_req_');
      if (r === 'expired')
        errors.push(
          JSON.stringify({
            id,
            custom_id: item.customId,
            response: null,
            error: {
              code: 'batch_expired',
              message: 'This request could not be executed before the completion window expired.',
            },
          }),
        );
      else
        (r.status < 300 ? out : errors).push(
          JSON.stringify({
            id,
            custom_id: item.customId,
            response: { status_code: r.status, request_id: this.id('req_'), body: JSON.parse(r.body) },
            error: null,
          }),
        );
    }
    const file = (lines: string[], name: string) => {
      if (!lines.length) return null;
      const id = this.id('file-');
      this.files.set(id, { purpose: 'batch_output', content: `${lines.join('\n')}\n`, filename: name });
      return id;
    };
    batch.outputFileId = file(out, `${batch.id}_output.jsonl`) ?? undefined;
    batch.errorFileId = file(errors, `${batch.id}_error.jsonl`) ?? undefined;
  }

  private counts(batch: FakeBatch) {
    let ok = 0;
    let failed = 0;
    let expired = 0;
    for (const r of batch.results.values()) {
      if (r === 'expired') expired++;
      else if (r.status < 300) ok++;
      else failed++;
    }
    return { ok, failed, expired };
  }

  private openaiView(batch: FakeBatch): unknown {
    const c = this.counts(batch);
    const status = batch.failedWith
      ? 'failed'
      : batch.ended
        ? 'completed'
        : batch.results.size
          ? 'in_progress'
          : 'validating';
    return {
      id: batch.id,
      object: 'batch',
      endpoint: batch.endpoint,
      errors: batch.failedWith
        ? { object: 'list', data: batch.failedWith.map((e) => ({ param: null, line: null, ...e })) }
        : null,
      input_file_id: batch.inputFileId,
      completion_window: '24h',
      status,
      output_file_id: batch.outputFileId ?? null,
      error_file_id: batch.errorFileId ?? null,
      created_at: unix(batch.created),
      in_progress_at: status === 'validating' ? null : unix(batch.created),
      expires_at: unix(batch.created + 86_400_000),
      finalizing_at: null,
      completed_at: batch.ended && !batch.failedWith ? unix(Date.now()) : null,
      failed_at: batch.failedWith ? unix(batch.created) : null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: batch.failedWith
        ? { total: 0, completed: 0, failed: 0 }
        : { total: batch.items.length, completed: c.ok, failed: c.failed + c.expired },
      metadata: null,
    };
  }

  private openaiBatch(id: string): Answer {
    const batch = this.batches.get(id);
    if (batch?.wire !== 'openai')
      return json(404, { error: { message: `No batch found with id '${id}'.`, type: 'invalid_request_error' } });
    return json(200, this.openaiView(batch));
  }

  private anthropicView(batch: FakeBatch): unknown {
    const c = this.counts(batch);
    const iso = (ms: number) => new Date(ms).toISOString();
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: batch.ended ? 'ended' : 'in_progress',
      request_counts: {
        processing: batch.ended ? 0 : batch.items.length - batch.results.size,
        succeeded: c.ok,
        errored: c.failed,
        canceled: 0,
        expired: batch.ended ? c.expired + (batch.items.length - batch.results.size) : c.expired,
      },
      ended_at: batch.ended ? iso(Date.now()) : null,
      created_at: iso(batch.created),
      expires_at: iso(batch.created + 86_400_000),
      archived_at: null,
      cancel_initiated_at: null,
      results_url: batch.ended ? `${batch.origin}/v1/messages/batches/${batch.id}/results` : null,
    };
  }

  private anthropicBatch(id: string): Answer {
    const batch = this.batches.get(id);
    if (batch?.wire !== 'anthropic')
      return json(404, { type: 'error', error: { type: 'not_found_error', message: `Batch not found: ${id}` } });
    return json(200, this.anthropicView(batch));
  }

  private anthropicResults(id: string): Answer {
    const batch = this.batches.get(id);
    if (batch?.wire !== 'anthropic')
      return json(404, { type: 'error', error: { type: 'not_found_error', message: `Batch not found: ${id}` } });
    if (!batch.ended)
      return json(400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: `Batch ${id} has not yet ended.` },
      });
    const lines = batch.items.map((item) => {
      const r = batch.results.get(item.customId);
      if (!r || r === 'expired') return JSON.stringify({ custom_id: item.customId, result: { type: 'expired' } });
      if (r.status < 300)
        return JSON.stringify({ custom_id: item.customId, result: { type: 'succeeded', message: JSON.parse(r.body) } });
      return JSON.stringify({ custom_id: item.customId, result: { type: 'errored', error: JSON.parse(r.body) } });
    });
    return { status: 200, headers: { 'content-type': 'application/binary' }, body: `${lines.join('\n')}\n` };
  }
}
