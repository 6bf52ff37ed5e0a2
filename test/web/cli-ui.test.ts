import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startDashboard } from '../../src/web/server/server.ts';
import { runCli } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { FIXTURES, startUiProcess } from './helpers.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(probe: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  for (const end = Date.now() + ms; !(await probe()); await new Promise((r) => setTimeout(r, 100)))
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
}

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

  it("shows the nights of the Sleep config's state folder (the one `sleep status` reads), or of --sleep-state", async () => {
    const dir = tmpDir('skillopt-ui-sleep-');
    const fromConfig = path.join(dir, 'from-config');
    fs.writeFileSync(path.join(dir, 'sleep.yaml'), `state_dir: ${JSON.stringify(fromConfig)}\n`);
    const env = { SKILLOPT_SLEEP_CONFIG: path.join(dir, 'sleep.yaml') };
    const [byConfig, byFlag] = await Promise.all([
      startUiProcess(['--runs', FIXTURES], undefined, env),
      startUiProcess(['--runs', FIXTURES, '--sleep-state', path.join(dir, 'given')], undefined, env),
    ]);
    try {
      for (const [ui, stateDir] of [
        [byConfig, fromConfig],
        [byFlag, path.join(dir, 'given')],
      ] as const) {
        assert.match(ui.output(), new RegExp(`Sleep nights from ${stateDir.replace(/[.]/g, '\\.')}`));
        const body = (await (await fetch(`${ui.url}api/nights`)).json()) as {
          enabled: boolean;
          stateDir: string;
          nights: unknown[];
        };
        assert.deepEqual(body, { enabled: true, stateDir, nights: [], problems: [] });
      }
    } finally {
      await Promise.all([byConfig.stop(), byFlag.stop()]);
    }
  });

  it('answers the names given with --allowed-host, and says so when it listens on every address', async () => {
    const ui = await startUiProcess([
      '--runs',
      FIXTURES,
      '--host',
      '0.0.0.0',
      '--allowed-host',
      'a.example',
      '--allowed-host',
      'b.example',
    ]);
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
      assert.deepEqual(
        [
          await ask(`a.example:${port}`),
          await ask(`b.example:${port}`),
          await ask(`c.example:${port}`),
          await ask(`localhost:${port}`),
        ],
        [200, 200, 403, 200],
      );
      assert.match(
        ui.output(),
        /warning: the dashboard listens on 0\.0\.0\.0: .* answers requests addressed to this machine's addresses, a\.example, b\.example, localhost and loopback addresses only/,
      );
      assert.match(
        ui.output(),
        /actions are off: the dashboard listens on 0\.0\.0\.0, not on loopback: .*--allow-actions/,
      );
    } finally {
      assert.equal(await ui.stop(), 0);
    }
  });

  it('on the network with --allow-actions, prints the token that actions need', async () => {
    const ui = await startUiProcess(['--runs', FIXTURES, '--host', '0.0.0.0', '--allow-actions']);
    const port = new URL(ui.url).port;
    try {
      const token = /actions token: (\S+) {2}\(open http:\/\/127\.0\.0\.1:\d+\/\?token=\1[ )]/.exec(ui.output())?.[1];
      assert.ok(token, ui.output());
      // Every address printed is one a browser can open, and the dashboard answers it (0.0.0.0 is neither).
      const printed = [...ui.output().matchAll(/http:\/\/[^\s/]+\//g)].map((m) => m[0]);
      assert.ok(printed.length >= 2, ui.output());
      for (const url of printed) {
        assert.doesNotMatch(url, /0\.0\.0\.0|\[::\]/);
        assert.equal((await fetch(`${url}api/ping`)).status, 200, url);
      }
      // The config roots are each named once (configs/ here is the package's own).
      const roots = /configs from ([^;]+);/.exec(ui.output())?.[1]?.split(', ') ?? [];
      assert.ok(roots.length > 0, ui.output());
      assert.equal(new Set(roots).size, roots.length, ui.output());
      const ask = async (headers: Record<string, string>) =>
        (await (await fetch(`http://127.0.0.1:${port}/api/actions`, { headers })).json()) as {
          enabled: boolean;
          needsToken?: boolean;
          token?: string;
        };
      const anonymous = await ask({});
      assert.deepEqual([anonymous.enabled, anonymous.needsToken, anonymous.token], [false, true, undefined]);
      assert.deepEqual(await ask({ 'x-skillopt-token': token! }), { enabled: true, token });
    } finally {
      assert.equal(await ui.stop(), 0);
    }
  });

  it('leaves the runs it launched running when it stops, says so, and another dashboard stops them', async () => {
    const runs = fs.realpathSync(tmpDir('skillopt-ui-runs-'));
    const ui = await startUiProcess(['--runs', runs]);
    let pid: number | undefined;
    try {
      const { token } = (await (await fetch(`${ui.url}api/actions`)).json()) as { token: string };
      const overrides = [
        'env.n_train=40',
        'env.n_val=6',
        'env.n_test=6',
        'train.batch_size=4',
        'model.target.options.latency_ms=200',
      ];
      const res = await fetch(`${ui.url}api/action/launch`, {
        method: 'POST',
        headers: { 'x-skillopt-token': token, 'content-type': 'application/json' },
        body: JSON.stringify({ config: '0/sim/default.yaml', overrides }),
      });
      const launched = (await res.json()) as { launched: boolean; run: string; job: { pid: number } };
      assert.equal(launched.launched, true);
      pid = launched.job.pid;
      const lock = path.join(runs, launched.run.slice(2), 'run.lock');
      await until(() => fs.existsSync(lock), 'the run to take its lock');
      assert.equal(await ui.stop(), 0);
      assert.match(
        ui.output(),
        new RegExp(
          `1 process\\(es\\) started from the dashboard keep running: run ${runs}/sim/\\d{8}_\\d{6} \\(pid ${pid}\\)`,
        ),
      );
      assert.ok(alive(pid), 'the run keeps running');

      // Another dashboard sees it running from its lock, and stops it at a safe point.
      const dash = await startDashboard({ roots: [runs], host: '127.0.0.1', port: 0 });
      try {
        const ask = (method: string, url: string, body?: unknown) =>
          fetch(`${dash.url}${url}`, {
            method,
            headers: { 'x-skillopt-token': dash.access.token, 'content-type': 'application/json' },
            ...(body ? { body: JSON.stringify(body) } : {}),
          }).then((r) => r.json() as Promise<Record<string, unknown>>);
        assert.equal((await ask('GET', `api/run?run=${launched.run}`)).status, 'running');
        assert.deepEqual(await ask('POST', 'api/action/stop', { run: launched.run }), { pid });
        // Its own record says it stopped (its pid may linger as a zombie where nothing reaps orphans).
        await until(
          async () => (await ask('GET', `api/run?run=${launched.run}`)).status === 'stopped',
          'the run to stop',
        );
        const events = fs.readFileSync(path.join(runs, launched.run.slice(2), 'events.jsonl'), 'utf8');
        assert.match(events, /"type":"run_stopped","reason":"interrupted"/);
      } finally {
        await dash.close();
      }
    } finally {
      await ui.stop();
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
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
