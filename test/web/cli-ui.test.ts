import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { FIXTURES, startUiProcess } from './helpers.ts';

describe('skillopt ui', () => {
  it('serves the runs of the given roots on loopback until stopped', async () => {
    const ui = await startUiProcess(['--runs', FIXTURES]);
    try {
      assert.match(ui.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
      const body = (await (await fetch(`${ui.url}api/runs`)).json()) as { runs: { id: string }[] };
      assert.deepEqual(body.runs.map((r) => r.id).sort(), ['0/finished-run', '0/python-searchqa']);
    } finally {
      assert.equal(await ui.stop(), 0, 'stops cleanly on SIGTERM');
    }
  });

  it('answers the names given with --allowed-host, and says so when it listens on every address', async () => {
    const ui = await startUiProcess(['--runs', FIXTURES, '--host', '0.0.0.0', '--allowed-host', 'a.example', '--allowed-host', 'b.example']);
    const port = Number(new URL(ui.url).port);
    const ask = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, path: '/api/ping', headers: { Host: host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    try {
      assert.deepEqual([await ask(`a.example:${port}`), await ask(`b.example:${port}`), await ask(`c.example:${port}`), await ask(`localhost:${port}`)], [200, 200, 403, 200]);
      assert.match(ui.output(), /warning: the dashboard listens on 0\.0\.0\.0: .* answers requests addressed to this machine's addresses, a\.example, b\.example, localhost and loopback addresses only/);
      assert.match(ui.output(), /actions are off: the dashboard listens on 0\.0\.0\.0, not on loopback: .*--allow-actions/);
    } finally {
      assert.equal(await ui.stop(), 0);
    }
  });

  it('on the network with --allow-actions, prints the token that actions need', async () => {
    const ui = await startUiProcess(['--runs', FIXTURES, '--host', '0.0.0.0', '--allow-actions']);
    const port = new URL(ui.url).port;
    try {
      const token = /actions token: (\S+) {2}\(open http:\/\/0\.0\.0\.0:\d+\/\?token=\1\)/.exec(ui.output())?.[1];
      assert.ok(token, ui.output());
      const ask = async (headers: Record<string, string>) => (await (await fetch(`http://127.0.0.1:${port}/api/actions`, { headers })).json()) as { enabled: boolean; needsToken?: boolean; token?: string };
      const anonymous = await ask({});
      assert.deepEqual([anonymous.enabled, anonymous.needsToken, anonymous.token], [false, true, undefined]);
      assert.deepEqual(await ask({ 'x-skillopt-token': token! }), { enabled: true, token });
    } finally {
      assert.equal(await ui.stop(), 0);
    }
  });

  it('refuses a config directory that does not exist', () => {
    const res = runCli(['ui', '--configs', '/nonexistent/configs']);
    assert.equal(res.status, 2);
    assert.match(res.stderr, /--configs \/nonexistent\/configs: no such directory/);
  });

  it('rejects a port that is not a number', () => {
    const res = runCli(['ui', '--port', 'http']);
    assert.equal(res.status, 2);
    assert.match(res.stderr, /--port must be a port number, not "http"/);
  });
});
