/**
 * The providers' HTTP client (node's http, not the global fetch) as a provider backend uses it:
 * what the global fetch did must still hold. Servers on 127.0.0.1 answer in the chat completions
 * wire format.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { buildRoleModels } from '../../src/model/stack.ts';
import { configWith } from '../helpers/model-config.ts';

const completion = (text: string) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1767225600,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
  });

async function listen(
  handler: http.RequestListener,
): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())) as Promise<void>,
  };
}

async function target(url: string, role: Record<string, unknown> = {}) {
  const r = { backend: 'openai_compatible', model: 'm', base_url: `${url}/v1`, max_retries: 0, ...role };
  const { config } = configWith({ model: { target: r, optimizer: r }, cache: { mode: 'off' } });
  const models = await buildRoleModels(config, { environment: { OPENAI_API_KEY: 'sk-test-key' } });
  return (text: string) => models.target.complete({ purpose: 'rollout', messages: [{ role: 'user', content: text }] });
}

describe("the providers' HTTP client", () => {
  const seen: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  let abandoned = 0;
  let server: Awaited<ReturnType<typeof listen>>;
  before(async () => {
    server = await listen((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen.push({ headers: req.headers, body });
        const asked = (JSON.parse(body) as { messages: { content: string }[] }).messages.at(-1)!.content;
        if (asked === 'never') return void res.on('close', () => abandoned++); // no answer: the caller's timeout decides
        const reply = Buffer.from(completion(`re: ${asked}`));
        if (asked === 'gzip')
          res
            .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
            .end(zlib.gzipSync(reply));
        else res.writeHead(200, { 'content-type': 'application/json' }).end(reply);
      });
    });
  });
  after(() => server.close());

  it('sends the JSON body and the key, and reuses one connection for calls one after another', async () => {
    const ask = await target(server.url);
    const before = server.connections();
    for (const q of ['one', 'two', 'three']) assert.equal((await ask(q)).text, `re: ${q}`);
    assert.equal(server.connections() - before, 1);
    const last = seen.at(-1)!;
    assert.equal(last.headers['content-type'], 'application/json');
    assert.equal((JSON.parse(last.body) as { model: string }).model, 'm');
  });

  it('reads a reply the server compressed unasked', async () => {
    const ask = await target(server.url);
    assert.equal((await ask('gzip')).text, 're: gzip');
  });

  it('gives up a call at its timeout and closes its connection', async () => {
    const ask = await target(server.url, { timeout_s: 0.3 });
    await assert.rejects(ask('never'), /timed out|timeout/i);
    await new Promise<void>((resolve) => {
      const check = () => (abandoned === 1 ? resolve() : setImmediate(check));
      check();
    });
  });

  it('reports a server that cannot be reached as a connection failure, with the socket error', async () => {
    const gone = await listen(() => {});
    await gone.close();
    const ask = await target(gone.url);
    await assert.rejects(ask('hello'), /connection failed: .*ECONNREFUSED|ECONNREFUSED/);
  });
});
