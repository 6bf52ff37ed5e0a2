import assert from 'node:assert/strict';
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

  it('rejects a port that is not a number', () => {
    const res = runCli(['ui', '--port', 'http']);
    assert.equal(res.status, 2);
    assert.match(res.stderr, /--port must be a port number, not "http"/);
  });
});
