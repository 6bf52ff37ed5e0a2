/**
 * `skillopt mcp` spoken to line by line, as a client (or anything else that can write to its
 * stdin) would: a request of 10 MB or 20 MB gets a JSON-RPC error and the server answers the next
 * request; a line that is not JSON gets a parse error; closing stdin ends the server with 0.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';
import { BIN } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

interface Reply {
  id: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

function server() {
  const project = fs.realpathSync(tmpDir('mcp-oversized-'));
  const child = spawn(process.execPath, [BIN, 'mcp', '--project', project], {
    cwd: project,
    env: { ...process.env, SKILLOPT_SLEEP_CONFIG: `${project}/no-sleep.yaml` },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const replies: Reply[] = [];
  let partial = '';
  let stderr = '';
  const waiting: (() => void)[] = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    partial += d;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines) if (line.trim()) replies.push(JSON.parse(line) as Reply);
    for (const w of waiting.splice(0)) w();
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));

  /** The reply to request `id`; fails after a minute with what the server said instead. */
  async function reply(id: string | number | null, count = 1): Promise<Reply> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const found = replies.filter((r) => r.id === id);
      if (found.length >= count) return found[count - 1]!;
      if (Date.now() > deadline || child.exitCode !== null)
        assert.fail(
          `no reply to ${JSON.stringify(id)} (exit ${child.exitCode}); replies: ${JSON.stringify(replies.map((r) => r.id))}; stderr: ${stderr.slice(-500)}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  return { child, send, reply, exited, stderr: () => stderr };
}

/** A `tools/call` request line of about `bytes` bytes (its argument is that long). */
function hugeCall(id: number, bytes: number): string {
  return `${JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'run_progress', arguments: { run: 'x'.repeat(bytes) } },
  })}\n`;
}

test('an oversized request gets a JSON-RPC error and the server goes on answering', async () => {
  const s = server();
  s.send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
  });
  assert.equal((await s.reply(1)).result?.protocolVersion, '2025-06-18');
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });

  for (const [id, mb] of [
    [2, 10],
    [4, 20],
  ] as const) {
    s.child.stdin.write(hugeCall(id, mb * 1024 * 1024));
    s.send({ jsonrpc: '2.0', id: id + 1, method: 'tools/list' });
    const refused = await s.reply(id);
    assert.equal(refused.error?.code, -32600, `${mb} MB: ${JSON.stringify(refused)}`);
    assert.match(refused.error!.message, /too large: \d+ bytes, the limit is 1048576 bytes/);
    const listed = await s.reply(id + 1);
    assert.ok(Array.isArray(listed.result?.tools) && listed.result.tools.length > 0, `${mb} MB: tools/list answered`);
  }
  assert.match(s.stderr(), /refused a message of \d+ bytes/);

  s.child.stdin.write('this is not json\n');
  assert.equal((await s.reply(null)).error?.code, -32700);
  s.send({ jsonrpc: '2.0', id: 6, method: 'ping' });
  assert.deepEqual((await s.reply(6)).result, {});

  s.child.stdin.end();
  assert.equal(await s.exited, 0);
});
