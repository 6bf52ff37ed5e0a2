/**
 * A limit on the size of one reply body (`model.<role>.max_reply_bytes`): a server that sends
 * megabytes of text would otherwise fill memory and the run's files. The body is counted as it
 * arrives and the call given up once it is over the limit (at once when the server announces
 * the length). The failure is of that call only: it is not retried and stops nothing else.
 */
import { CallFailure } from '../failure.ts';
import { httpClient } from './http-client.ts';

function tooLarge(role: string, maxBytes: number, size: string): CallFailure {
  return new CallFailure(
    `model.${role}: the reply is larger than model.${role}.max_reply_bytes=${maxBytes} (${size}); the call is given up. Raise the limit if replies this long are expected`,
    'rejected',
    undefined,
    undefined,
    `every reply is larger than the limit: raise model.${role}.max_reply_bytes if replies this long are expected, or check why the server sends them`,
  );
}

/**
 * A `fetch` that refuses reply bodies over `maxBytes`, for a provider SDK: the providers' HTTP
 * client, or `base` (a test's in-process server) with the body counted as it arrives.
 */
export function replyCapFetch(role: string, maxBytes: number, base?: typeof fetch): typeof fetch {
  if (!base) return httpClient(maxBytes, (size) => tooLarge(role, maxBytes, size), globalThis.fetch);
  return async (input, init) => {
    const response = await base(input, init);
    const announced = Number(response.headers.get('content-length'));
    if (announced > maxBytes) {
      await response.body?.cancel().catch(() => {});
      throw tooLarge(role, maxBytes, `${announced} bytes announced`);
    }
    if (!response.body) return response;
    let seen = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) controller.error(tooLarge(role, maxBytes, `more than ${maxBytes} bytes received`));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
