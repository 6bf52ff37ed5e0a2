import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { BIN, ROOT, runCli } from '../helpers/cli.ts';
import { FIXTURES } from './helpers.ts';

describe('skillopt ui', () => {
  it('serves the runs of the given roots on loopback until stopped', async () => {
    const child = spawn(process.execPath, [BIN, 'ui', '--runs', FIXTURES, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 30_000);
        child.stdout.on('data', (c) => {
          out += c;
          const m = /skillopt dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
      });
      const body = (await (await fetch(`${url}api/runs`)).json()) as { runs: { id: string }[] };
      assert.deepEqual(body.runs.map((r) => r.id).sort(), ['0/finished-run', '0/python-searchqa']);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, 'stops cleanly on SIGTERM');
  });

  it('rejects a port that is not a number', () => {
    const res = runCli(['ui', '--port', 'http']);
    assert.equal(res.status, 2);
    assert.match(res.stderr, /--port must be a port number, not "http"/);
  });
});
