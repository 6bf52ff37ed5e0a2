/**
 * The providers' HTTP client: a `fetch` for the AI SDK made of node's http/https with kept-alive
 * connections, the reply read whole (its size capped as it arrives) and handed over as a
 * `Response`. A call costs less than half the CPU of the global fetch with a counting stream
 * (`bench/call-cpu.ts`): the replies of `doGenerate` are JSON read whole anyway. Failures look like
 * the global fetch's (`TypeError: fetch failed` with the socket error as cause; an abort rejects
 * with the signal's reason), so they are classified the same way.
 */
import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';

// As node's own global agent: an idle connection is closed after 5 s, before most servers close it under a request.
const kept = { keepAlive: true, scheduling: 'lifo', timeout: 5000 } as const;
const agents = { 'http:': new http.Agent(kept), 'https:': new https.Agent(kept) };

/** Servers that compress unasked: the body is inflated as the global fetch would. */
const inflate: Record<string, (b: Buffer) => Buffer> = {
  gzip: zlib.gunzipSync,
  'x-gzip': zlib.gunzipSync,
  deflate: zlib.inflateSync,
  br: zlib.brotliDecompressSync,
};

function headersOf(init: RequestInit['headers']): Record<string, string> {
  if (!init) return {};
  if (init instanceof Headers || Array.isArray(init)) return Object.fromEntries(new Headers(init));
  return init as Record<string, string>;
}

/**
 * A `fetch` whose reply bodies over `maxBytes` fail with `tooLarge(size)`. Requests it does not
 * handle (a `Request` object, a body other than a string or bytes) go to the global fetch.
 */
export function httpClient(maxBytes: number, tooLarge: (size: string) => Error, fallback: typeof fetch): typeof fetch {
  return (input, init = {}) => {
    const body = init.body;
    if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array)))
      return fallback(input, init);
    const url = input instanceof URL ? input : new URL(input);
    const agent = agents[url.protocol as keyof typeof agents];
    if (!agent) return fallback(input, init);
    const signal = init.signal ?? undefined;
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const request = (url.protocol === 'https:' ? https : http).request(
        url,
        { method: init.method ?? 'GET', headers: headersOf(init.headers), agent },
        (res) => {
          const fail = (err: Error) => {
            res.destroy();
            done(err);
          };
          const announced = Number(res.headers['content-length']);
          if (announced > maxBytes) return fail(tooLarge(`${announced} bytes announced`));
          const chunks: Buffer[] = [];
          let seen = 0;
          res.on('data', (chunk: Buffer) => {
            seen += chunk.length;
            if (seen > maxBytes) fail(tooLarge(`more than ${maxBytes} bytes received`));
            else chunks.push(chunk);
          });
          res.on('error', (err) => done(new TypeError('fetch failed', { cause: err })));
          res.on('end', () => {
            let data: Buffer = Buffer.concat(chunks);
            const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
            try {
              if (inflate[encoding]) data = inflate[encoding](data);
            } catch (err) {
              return done(new TypeError('fetch failed', { cause: err }));
            }
            try {
              const headers = new Headers();
              for (const [k, v] of Object.entries(res.headers))
                if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
              const status = res.statusCode ?? 0;
              done(
                undefined,
                new Response(status === 204 || status === 304 ? null : data, {
                  status,
                  statusText: res.statusMessage ?? '',
                  headers,
                }),
              );
            } catch (err) {
              done(new TypeError('fetch failed', { cause: err }));
            }
          });
        },
      );
      const abort = () => {
        request.destroy();
        done(signal!.reason);
      };
      let settled = false;
      function done(err: unknown, response?: Response) {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', abort);
        if (response) resolve(response);
        else reject(err);
      }
      signal?.addEventListener('abort', abort, { once: true });
      request.on('error', (err) => done(new TypeError('fetch failed', { cause: err })));
      request.end(body ?? undefined);
    });
  };
}
