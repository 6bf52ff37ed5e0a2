/**
 * The two providers' batch APIs, as the batch transport sees them: send a list of requests
 * (each the body the SDK would have sent live, under a `custom_id`), read how far the batch has
 * come, and read its results, each as the HTTP reply the live call would have had.
 *
 * - OpenAI's Batch API: the requests go up as a JSONL file (`POST /files`, purpose `batch`), a
 *   batch is made of it (`POST /batches`, one endpoint, a 24 h window); once it has ended, its
 *   output file holds the answers and its error file the failures (`GET /files/{id}/content`).
 * - Anthropic's Message Batches: the requests go in the body (`POST /messages/batches`); once
 *   `processing_status` is `ended`, `results_url` serves one JSONL line per request.
 *
 * Both keep the key and the headers the SDK sent with the live request, and call only the base
 * URL the role is configured with.
 */
import { z } from 'zod';
import { CallFailure, classifyFailure, failureFromStatus, headerMap } from '../failure.ts';

export type BatchApiName = 'openai' | 'anthropic';

/** One request of a batch: its id in the batch and the body of the live request. */
export interface BatchItem {
  customId: string;
  body: string;
}

/** How far a batch has come. */
export interface BatchProgress {
  total: number;
  /** Items answered or failed. */
  finished: number;
  failed: number;
  /** The batch has ended: its results can be read. */
  ended: boolean;
  /** The batch ended without results (OpenAI: `failed` validation), with the provider's words. */
  refused?: string;
}

/** An item's result: the reply the live call would have had, or why there is none. */
export type BatchResult = { status: number; body: string } | { missing: string };

export interface BatchApi {
  readonly name: BatchApiName;
  submit(items: BatchItem[], signal?: AbortSignal): Promise<string>;
  progress(id: string, signal?: AbortSignal): Promise<BatchProgress>;
  results(id: string, signal?: AbortSignal): Promise<Map<string, BatchResult>>;
}

/** Where a live request goes and whose batch API takes it: by the path the SDK calls. */
export function batchRoute(url: string): { api: BatchApiName; base: string; endpoint: string } | undefined {
  const u = new URL(url);
  for (const [suffix, api] of [
    ['/chat/completions', 'openai'],
    ['/responses', 'openai'],
    ['/messages', 'anthropic'],
  ] as const) {
    if (!u.pathname.endsWith(suffix)) continue;
    const basePath = u.pathname.slice(0, -suffix.length);
    return { api, base: `${u.origin}${basePath}${u.search}`, endpoint: u.pathname };
  }
  return undefined;
}

/** The headers of the live request that the batch endpoints need too: the key, the API version, the org. */
const KEPT_HEADERS = /^(authorization|x-api-key|anthropic-version|anthropic-beta|openai-organization|openai-project)$/i;

export function keptHeaders(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new Headers(headers)) if (KEPT_HEADERS.test(k)) out[k] = v;
  return out;
}

/** One HTTP exchange with a batch endpoint; a reply other than 2xx fails as the live call would. */
async function call(
  fetcher: typeof fetch,
  label: string,
  url: string,
  init: RequestInit & { signal?: AbortSignal },
): Promise<string> {
  let response: Response;
  try {
    response = await fetcher(url, init);
  } catch (err) {
    throw classifyFailure(err, label) ?? err;
  }
  const text = await response.text();
  if (!response.ok)
    throw failureFromStatus(
      response.status,
      '',
      text,
      headerMap(response.headers),
      `${label} (${init.method ?? 'GET'} ${new URL(url).pathname})`,
    );
  return text;
}

const Named = z.object({ id: z.string() }).loose();
const Counts = z.record(z.string(), z.number()).nullish();
const OpenAIBatch = z
  .object({
    id: z.string(),
    status: z.string(),
    request_counts: Counts,
    errors: z
      .object({
        data: z.array(z.object({ code: z.string().nullish(), message: z.string().nullish() }).loose()).nullish(),
      })
      .loose()
      .nullish(),
    output_file_id: z.string().nullish(),
    error_file_id: z.string().nullish(),
  })
  .loose();
const OpenAIResultLine = z
  .object({
    custom_id: z.string(),
    response: z.object({ status_code: z.number(), body: z.unknown() }).loose().nullish(),
    error: z.object({ code: z.string().nullish(), message: z.string().nullish() }).loose().nullish(),
  })
  .loose();
const AnthropicBatch = z
  .object({ id: z.string(), processing_status: z.string(), request_counts: Counts, results_url: z.string().nullish() })
  .loose();
const AnthropicError = z.object({ type: z.string().optional(), message: z.string().optional() }).loose();
const AnthropicResultLine = z
  .object({
    custom_id: z.string(),
    result: z
      .object({
        type: z.string(),
        message: z.unknown().optional(),
        error: z.object({ type: z.string().optional(), error: AnthropicError.optional() }).loose().optional(),
      })
      .loose(),
  })
  .loose();

/** A batch endpoint's reply in the shape it documents; anything else is a bad reply naming the field. */
function parseJson<T>(text: string, what: string, schema: z.ZodType<T>): T {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new CallFailure(`${what}: the reply is not JSON: ${text.slice(0, 120)}`, 'bad_response', 200);
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new CallFailure(
    `${what}: unexpected reply (${issue.path.join('.') || 'body'}: ${issue.message}): ${text.slice(0, 120)}`,
    'bad_response',
    200,
  );
}

/** The lines of a results file in the documented shape; a line that is not is left out (its call is made live). */
function jsonLinesOf<T>(text: string, schema: z.ZodType<T>): T[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        const parsed = schema.safeParse(JSON.parse(l));
        return parsed.success ? [parsed.data] : [];
      } catch {
        return [];
      }
    });
}

class OpenAIBatches implements BatchApi {
  readonly name = 'openai';
  constructor(
    private readonly base: string,
    private readonly endpoint: string,
    private readonly headers: Record<string, string>,
    private readonly fetcher: typeof fetch,
  ) {}

  private url(path: string): string {
    const u = new URL(this.base);
    return `${u.origin}${u.pathname}${path}${u.search}`;
  }

  async submit(items: BatchItem[], signal?: AbortSignal): Promise<string> {
    const jsonl = items
      .map((i) =>
        JSON.stringify({ custom_id: i.customId, method: 'POST', url: this.endpoint, body: JSON.parse(i.body) }),
      )
      .join('\n');
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([`${jsonl}\n`], { type: 'application/jsonl' }), 'skillopt-batch.jsonl');
    const file = parseJson(
      await call(this.fetcher, 'OpenAI Files', this.url('/files'), {
        method: 'POST',
        headers: this.headers,
        body: form,
        signal,
      }),
      'OpenAI Files',
      Named,
    );
    const batch = parseJson(
      await call(this.fetcher, 'OpenAI Batch', this.url('/batches'), {
        method: 'POST',
        headers: { ...this.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ input_file_id: file.id, endpoint: this.endpoint, completion_window: '24h' }),
        signal,
      }),
      'OpenAI Batch',
      Named,
    );
    return batch.id;
  }

  private async batch(id: string, signal?: AbortSignal) {
    return parseJson(
      await call(this.fetcher, 'OpenAI Batch', this.url(`/batches/${id}`), { headers: this.headers, signal }),
      'OpenAI Batch',
      OpenAIBatch,
    );
  }

  async progress(id: string, signal?: AbortSignal): Promise<BatchProgress> {
    const b = await this.batch(id, signal);
    const counts = b.request_counts ?? {};
    const ended = ['completed', 'failed', 'expired', 'cancelled'].includes(b.status);
    const progress: BatchProgress = {
      total: Number(counts.total ?? 0),
      finished: Number(counts.completed ?? 0) + Number(counts.failed ?? 0),
      failed: Number(counts.failed ?? 0),
      ended,
    };
    if (b.status === 'failed')
      progress.refused = (b.errors?.data ?? []).map((e) => `${e.code ?? 'error'}: ${e.message}`).join('; ') || 'failed';
    return progress;
  }

  async results(id: string, signal?: AbortSignal): Promise<Map<string, BatchResult>> {
    const b = await this.batch(id, signal);
    const out = new Map<string, BatchResult>();
    for (const fileId of [b.output_file_id, b.error_file_id]) {
      if (!fileId) continue;
      const text = await call(this.fetcher, 'OpenAI Files', this.url(`/files/${fileId}/content`), {
        headers: this.headers,
        signal,
      });
      for (const line of jsonLinesOf(text, OpenAIResultLine)) {
        const id = line.custom_id;
        if (line.response)
          out.set(id, { status: Number(line.response.status_code), body: JSON.stringify(line.response.body) });
        else out.set(id, { missing: `${line.error?.code ?? 'error'}: ${line.error?.message ?? 'no reply'}` });
      }
    }
    return out;
  }
}

/** The HTTP status of the live call that an Anthropic error type stands for. */
const ANTHROPIC_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

class AnthropicBatches implements BatchApi {
  readonly name = 'anthropic';
  constructor(
    private readonly base: string,
    private readonly headers: Record<string, string>,
    private readonly fetcher: typeof fetch,
  ) {}

  async submit(items: BatchItem[], signal?: AbortSignal): Promise<string> {
    const body = `{"requests":[${items.map((i) => `{"custom_id":${JSON.stringify(i.customId)},"params":${i.body}}`).join(',')}]}`;
    const batch = parseJson(
      await call(this.fetcher, 'Anthropic Message Batches', `${this.base}/messages/batches`, {
        method: 'POST',
        headers: { ...this.headers, 'content-type': 'application/json' },
        body,
        signal,
      }),
      'Anthropic Message Batches',
      Named,
    );
    return batch.id;
  }

  private async batch(id: string, signal?: AbortSignal) {
    return parseJson(
      await call(this.fetcher, 'Anthropic Message Batches', `${this.base}/messages/batches/${id}`, {
        headers: this.headers,
        signal,
      }),
      'Anthropic Message Batches',
      AnthropicBatch,
    );
  }

  async progress(id: string, signal?: AbortSignal): Promise<BatchProgress> {
    const b = await this.batch(id, signal);
    const c = b.request_counts ?? {};
    const failed = Number(c.errored ?? 0) + Number(c.canceled ?? 0) + Number(c.expired ?? 0);
    const finished = Number(c.succeeded ?? 0) + failed;
    return { total: finished + Number(c.processing ?? 0), finished, failed, ended: b.processing_status === 'ended' };
  }

  async results(id: string, signal?: AbortSignal): Promise<Map<string, BatchResult>> {
    const b = await this.batch(id, signal);
    // The results' address is the batch's to give: it is read from the batch, on the configured host only.
    const url = b.results_url ? String(b.results_url) : `${this.base}/messages/batches/${id}/results`;
    if (new URL(url).origin !== new URL(this.base).origin)
      throw new CallFailure(
        `Anthropic Message Batches: the results are at ${new URL(url).origin}, not at the configured ${new URL(this.base).origin}; the key is not sent there`,
        'bad_response',
        200,
      );
    const text = await call(this.fetcher, 'Anthropic Message Batches', url, { headers: this.headers, signal });
    const out = new Map<string, BatchResult>();
    for (const line of jsonLinesOf(text, AnthropicResultLine)) {
      const r = line.result;
      const customId = line.custom_id;
      if (r.type === 'succeeded') out.set(customId, { status: 200, body: JSON.stringify(r.message) });
      else if (r.type === 'errored') {
        const error = r.error?.error ?? {};
        out.set(customId, {
          status: ANTHROPIC_STATUS[error.type ?? ''] ?? 500,
          body: JSON.stringify(r.error?.type === 'error' ? r.error : { type: 'error', error }),
        });
      } else out.set(customId, { missing: r.type });
    }
    return out;
  }
}

export function batchApi(
  route: { api: BatchApiName; base: string; endpoint: string },
  headers: Record<string, string>,
  fetcher: typeof fetch,
): BatchApi {
  return route.api === 'openai'
    ? new OpenAIBatches(route.base, route.endpoint, headers, fetcher)
    : new AnthropicBatches(route.base, headers, fetcher);
}
