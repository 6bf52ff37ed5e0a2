/**
 * A key in a base URL's query (`?api-key=…`, `?sig=…`, `?X-Amz-Signature=…`) or its user-info is
 * a key like any other: the run's records (config.json, summary.json) keep `****` in its place,
 * and the dashboard serves none, not even from the records of an earlier version.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { isSecretParamName, redact, redactText, redactUrls } from '../../src/config/redact.ts';
import { startDashboard } from '../../src/web/server/server.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { trainSim } from '../helpers/train.ts';

/** Every file under `dir` that holds `text`. */
function filesHolding(dir: string, text: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => {
    const file = path.join(dir, f);
    return fs.statSync(file).isFile() && fs.readFileSync(file, 'utf8').includes(text);
  });
}

describe('secrets in URLs', () => {
  it('every query parameter named like a secret loses its value, in a config and in a message; the others stay', () => {
    for (const name of ['api-key', 'key', 'sig', 'auth', 'secret', 'access_key', 'X-Amz-Signature', 'apiKey', 'token'])
      assert.ok(isSecretParamName(name), name);
    for (const name of ['api-version', 'model', 'deployment', 'region', 'stream']) assert.ok(!isSecretParamName(name));
    const url =
      'https://gw.example.com/v1?api-version=2024-06-01&api-key=k1&key=k2&sig=k3&auth=k4&secret=k5&access_key=k6&X-Amz-Signature=k7';
    const expected =
      'https://gw.example.com/v1?api-version=2024-06-01&api-key=****&key=****&sig=****&auth=****&secret=****&access_key=****&X-Amz-Signature=****';
    assert.equal(redactUrls(url), expected);
    assert.equal(redact({ model: { target: { base_url: url } } }).model.target.base_url, expected);
    assert.equal(redactText(`POST ${url} failed`), `POST ${expected} failed`);
    assert.equal(redactUrls('http://me:pw@host:8000/v1?x=1'), 'http://****@host:8000/v1?x=1');
  });

  it("a run's config.json and summary.json hold the base URL without its key", async () => {
    const key = 'gw-query-key-7Qx2';
    const run = await trainSim([
      'train.num_epochs=1',
      'env.n_train=8',
      'env.n_val=6',
      'env.n_test=6',
      `model.target.base_url=https://gw.example.com/v1?api-version=2024-06-01&api-key=${key}`,
    ]);
    assert.equal(run.outcome.status, 'finished');
    assert.deepEqual(filesHolding(run.out, key), []);
    const recorded = JSON.parse(fs.readFileSync(path.join(run.out, 'config.json'), 'utf8'));
    assert.equal(
      recorded.config.model.target.base_url,
      'https://gw.example.com/v1?api-version=2024-06-01&api-key=****',
    );
    assert.match(fs.readFileSync(path.join(run.out, 'summary.json'), 'utf8'), /api-version=2024-06-01&api-key=\*{4}/);
  });

  it('the dashboard serves no key of a URL: /api/runs, /api/run, /api/file of a record written before, and the config check', async () => {
    const roots = tmpDir('skillopt-url-runs-');
    const configs = tmpDir('skillopt-url-configs-');
    const recordedKey = 'old-record-key-Vb81';
    const sig = 'sas-signature-Zr33';
    const config = {
      model: {
        backend: 'sim',
        target: { model: 'sim-1', base_url: `https://u:pass-in-url-Hh4@gw.example.com/v1?key=${recordedKey}` },
        optimizer: { model: 'sim-1', base_url: `https://blob.example.com/v1?sv=2024&sig=${sig}` },
        reasoning_effort: '',
      },
      env: { name: 'sim' },
    };
    // A run as an earlier version recorded it: the URL as given.
    writeFiles(path.join(roots, 'old-run'), {
      'config.json': JSON.stringify({ config, derived: { total_steps: 1 } }),
      'events.jsonl': '',
    });
    writeFiles(configs, { 'gateway.yaml': stringify(config) });
    const dash = await startDashboard({
      roots: [roots],
      host: '127.0.0.1',
      port: 0,
      configRoots: [configs],
      log: () => {},
    });
    try {
      const get = async (url: string, init?: RequestInit) => {
        const res = await fetch(`http://127.0.0.1:${dash.port}${url}`, init);
        return { status: res.status, text: await res.text() };
      };
      const token = JSON.parse((await get('/api/actions')).text).token as string;
      const answers = [
        await get('/api/runs'),
        await get('/api/run?run=0/old-run'),
        await get('/api/file?run=0/old-run&path=config.json'),
        await get('/api/action/check', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-skillopt-token': token },
          body: JSON.stringify({ config: '0/gateway.yaml' }),
        }),
      ];
      for (const [i, a] of answers.entries()) {
        assert.equal(a.status, 200, a.text);
        for (const secret of [recordedKey, sig, 'pass-in-url-Hh4'])
          assert.ok(!a.text.includes(secret), `${i}: ${a.text}`);
      }
      assert.match(answers[2]!.text, /key=\*{4}/);
      assert.match(answers[3]!.text, /sig=\*{4}/);
    } finally {
      await dash.close();
    }
  });
});
