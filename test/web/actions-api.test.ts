/**
 * The dashboard's actions over HTTP: who may act (loopback, --allow-actions and the token,
 * same origin only), which configs the page may read, a config shown with the same messages
 * and the same dry run as the CLI's, and the endpoint checks against a fake provider.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const TOKEN = 'x-skillopt-token';
const PROJECT_CONFIGS = path.join(ROOT, 'configs');

/** A client of one dashboard: `call(method, path, body, headers)`, the page's token sent unless `headers` says otherwise. */
function clientOf(dash: RunningDashboard, token?: string) {
  return async (
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Json }> => {
    // A server on every address is asked on loopback.
    const res = await fetch(`http://127.0.0.1:${dash.port}${url}`, {
      method,
      headers: {
        ...(token ? { [TOKEN]: token } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  };
}

describe('who may act through the dashboard', () => {
  const runs = tmpDir('skillopt-actions-runs-');
  const refused: string[] = [];
  let dash: RunningDashboard;
  before(async () => {
    dash = await startDashboard({
      roots: [runs],
      host: '127.0.0.1',
      port: 0,
      configRoots: [PROJECT_CONFIGS],
      log: (l) => refused.push(l),
    });
  });
  after(() => dash?.close());

  it('on loopback, gives its own page the token, and takes actions that carry it', async () => {
    const info = await clientOf(dash)('GET', '/api/actions');
    assert.equal(info.body.enabled, true);
    assert.equal(info.body.token, dash.access.token);
    assert.ok(dash.access.token.length >= 32);
    const ok = await clientOf(dash, info.body.token)('POST', '/api/action/check', { config: '0/sim/default.yaml' });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.valid, true);
  });

  it('refuses an action without the token, with a wrong one, from another origin, or not as JSON', async () => {
    const call = clientOf(dash);
    const body = { config: '0/sim/default.yaml' };
    const cases: [string, Record<string, string>, unknown, number, RegExp][] = [
      ['no token', {}, body, 403, /token is missing or wrong/],
      ['a wrong token', { [TOKEN]: 'guess' }, body, 403, /token is missing or wrong/],
      [
        'another origin',
        { [TOKEN]: dash.access.token, origin: 'http://evil.example' },
        body,
        403,
        /another origin \(http:\/\/evil\.example\)/,
      ],
      ['an opaque origin', { [TOKEN]: dash.access.token, origin: 'null' }, body, 403, /another origin/],
      [
        'a cross-site fetch',
        { [TOKEN]: dash.access.token, 'sec-fetch-site': 'cross-site' },
        body,
        403,
        /cross-site request is refused/,
      ],
      [
        'a form post',
        { [TOKEN]: dash.access.token, 'content-type': 'application/x-www-form-urlencoded' },
        'config=0/sim/default.yaml',
        415,
        /POST of JSON/,
      ],
    ];
    for (const [what, headers, b, status, why] of cases) {
      const res = await call('POST', '/api/action/launch', b, headers);
      assert.equal(res.status, status, what);
      assert.match(res.body.error, why, what);
    }
    assert.equal((await call('GET', '/api/action/configs')).status, 403, 'reads of the action API need the token too');
    const same = await call('POST', '/api/action/check', body, {
      [TOKEN]: dash.access.token,
      origin: dash.url.replace(/\/$/, ''),
      'sec-fetch-site': 'same-origin',
    });
    assert.equal(same.status, 200, 'the page itself is let through');
    assert.equal(refused.length, cases.length + 1, 'each refusal is reported');
    assert.match(refused[2]!, /refused POST \/api\/action\/launch: a request from another origin/);
    assert.deepEqual(fs.readdirSync(runs), [], 'nothing was launched');
  });

  it('beyond loopback, acts only with --allow-actions, and only for the holder of the printed token', async () => {
    const off = await startDashboard({
      roots: [runs],
      host: '0.0.0.0',
      port: 0,
      configRoots: [PROJECT_CONFIGS],
      log: () => {},
    });
    const on = await startDashboard({
      roots: [runs],
      host: '0.0.0.0',
      port: 0,
      configRoots: [PROJECT_CONFIGS],
      allowActions: true,
      log: () => {},
    });
    try {
      const info = await clientOf(off)('GET', '/api/actions');
      assert.equal(info.body.enabled, false);
      assert.match(info.body.reason, /listens on 0\.0\.0\.0, not on loopback: .* --allow-actions/);
      assert.equal(info.body.token, undefined);
      const refusedOff = await clientOf(off, off.access.token)('POST', '/api/action/check', {
        config: '0/sim/default.yaml',
      });
      assert.equal(refusedOff.status, 404, 'without --allow-actions there is no action API at all');

      const anonymous = await clientOf(on)('GET', '/api/actions');
      assert.deepEqual(
        [anonymous.body.enabled, anonymous.body.needsToken, anonymous.body.token],
        [false, true, undefined],
        'the token is not handed out on the network',
      );
      assert.equal(
        (await clientOf(on, 'guess')('POST', '/api/action/check', { config: '0/sim/default.yaml' })).status,
        403,
      );
      const holder = await clientOf(on, on.access.token)('GET', '/api/actions');
      assert.equal(holder.body.enabled, true);
      assert.equal(
        (await clientOf(on, on.access.token)('POST', '/api/action/check', { config: '0/sim/default.yaml' })).status,
        200,
      );
    } finally {
      await off.close();
      await on.close();
    }
  });
});

describe('configs, as the New run page reads them', () => {
  const runs = tmpDir('skillopt-actions-runs-');
  const mine = fs.realpathSync(tmpDir('skillopt-configs-'));
  const outside = fs.realpathSync(tmpDir('skillopt-outside-'));
  fs.writeFileSync(path.join(outside, 'secret.yaml'), 'env:\n  name: sim\n# SECRET-outside\n');
  writeFiles(mine, {
    'small.yaml': `_base_: ${path.join(PROJECT_CONFIGS, 'sim/default.yaml')}\ntrain:\n  num_epochs: 1\n`,
    '_base_/shared.yaml': 'train:\n  seed: 1\n',
    'with-key.yaml': `_base_: ${path.join(PROJECT_CONFIGS, 'sim/default.yaml')}\n# the key of our gateway: sk-live-1234567890abcdefXYZ\n`,
    '.hidden/x.yaml': 'train: {}\n',
    'notes.txt': 'not a config\n',
  });
  fs.symlinkSync(path.join(outside, 'secret.yaml'), path.join(mine, 'linked.yaml'));
  let dash: RunningDashboard;
  let call: ReturnType<typeof clientOf>;
  before(async () => {
    dash = await startDashboard({
      roots: [runs],
      host: '127.0.0.1',
      port: 0,
      configRoots: [PROJECT_CONFIGS, mine, PROJECT_CONFIGS],
    });
    call = clientOf(dash, dash.access.token);
  });
  after(() => dash?.close());

  it('lists the YAML files of the config roots, without their _base_ files, hidden files or links', async () => {
    const { body } = await call('GET', '/api/action/configs');
    assert.deepEqual(body.roots, [PROJECT_CONFIGS, mine], 'a root given twice is listed once');
    const ids = body.configs.map((c: Json) => c.id);
    assert.ok(ids.includes('0/sim/default.yaml') && ids.includes('0/searchqa/default.yaml'));
    assert.deepEqual(
      ids.filter((id: string) => id.startsWith('1/')),
      ['1/small.yaml', '1/with-key.yaml'],
    );
    assert.ok(!ids.some((id: string) => id.includes('_base_')));
    assert.deepEqual(body.runRoots, [runs]);
    assert.ok(body.backends.includes('sim') && body.backends.includes('openai_compatible'));
  });

  it('reads no file outside the config roots, whatever the request names', async () => {
    for (const [config, status, why] of [
      ['1/../../etc/passwd', 403, /may not leave the config root/],
      ['1/linked.yaml', 403, /resolves outside the config root/],
      ['0//etc/hosts', 403, /must be relative to the config root/],
      ['1/.hidden/x.yaml', 403, /hidden file/],
      ['1/notes.txt', 403, /only YAML files/],
      ['1/missing.yaml', 404, /no config file missing\.yaml/],
      ['7/sim/default.yaml', 404, /no config root number 7/],
      ['sim/default.yaml', 400, /not a config id/],
    ] as const) {
      const res = await call('POST', '/api/action/check', { config });
      assert.equal(res.status, status, config);
      assert.match(res.body.error, why, config);
      assert.ok(!JSON.stringify(res.body).includes('SECRET-outside'));
    }
  });

  it('shows a config resolved, marking what differs from its base and what the form changed', async () => {
    const { body } = await call('POST', '/api/action/check', {
      config: '1/small.yaml',
      overrides: ['train.batch_size=4'],
    });
    assert.equal(body.valid, true);
    const mark = (p: string) => body.lines.find((l: Json) => l.path === p)?.mark ?? null;
    // small.yaml's base is the sim config: it changes the epochs; the form changes the batch size.
    assert.equal(mark('train.num_epochs'), 'base');
    assert.equal(mark('train.batch_size'), 'form');
    assert.equal(mark('model.target.backend'), null, 'the sim backend comes from the base');
    assert.equal(mark('train.seed'), null);
    assert.equal(body.lines.find((l: Json) => l.path === 'train.num_epochs').value, '1');
    assert.deepEqual(
      [body.form['train.num_epochs'], body.form['train.batch_size'], body.form['optimizer.lr_scheduler']],
      [1, 4, 'cosine'],
    );
    assert.match(body.source, /num_epochs: 1/, 'the file as written');
    assert.match(
      body.command,
      /^skillopt train --config \S+small\.yaml --out \S+\/sim\/\d{8}_\d{6} --set train\.batch_size=4$/,
    );
  });

  it('shows the file as written with anything shaped like a key masked', async () => {
    const { body } = await call('POST', '/api/action/check', { config: '1/with-key.yaml' });
    assert.match(body.source, /# the key of our gateway: \*\*\*\*/);
    assert.ok(!JSON.stringify(body).includes('1234567890abcdef'));
  });

  it('says what is wrong with a setting in the words of the CLI', async () => {
    const { body } = await call('POST', '/api/action/check', {
      config: '0/sim/default.yaml',
      overrides: ['train.batch_size=abc', 'optimizer.lr_scheduler=cosin'],
    });
    assert.equal(body.valid, false);
    const cli = runCli([
      'train',
      '--config',
      'configs/sim/default.yaml',
      '--set',
      'train.batch_size=abc',
      '--set',
      'optimizer.lr_scheduler=cosin',
      '--dry-run',
    ]);
    assert.equal(cli.status, 2);
    assert.equal(`skillopt: ${body.error}\n`, cli.stderr);
    assert.match(body.error, /train\.batch_size: expected number, got string "abc"/);
  });

  it("estimates the run's calls and cost as train --dry-run does", async () => {
    const overrides = ['env.n_train=12', 'train.batch_size=4', 'train.num_epochs=2'];
    const { body } = await call('POST', '/api/action/check', { config: '0/sim/default.yaml', overrides });
    const cli = runCli([
      'train',
      '--config',
      'configs/sim/default.yaml',
      ...overrides.flatMap((o) => ['--set', o]),
      '--dry-run',
    ]);
    assert.equal(cli.status, 0, cli.stderr);
    const total = /^total\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)/m.exec(cli.stdout)!;
    const n = (s: string) => Number(s.replace(/,/g, ''));
    assert.deepEqual(
      [body.plan.total.calls, body.plan.total.inputTokens, body.plan.total.outputTokens],
      [n(total[1]!), n(total[2]!), n(total[3]!)],
    );
    assert.equal(body.plan.totalSteps, 6);
  });

  it('puts a new run under the run directory asked for, inside a run root only', async () => {
    const ok = await call('POST', '/api/action/check', {
      config: '0/sim/default.yaml',
      out: { root: 0, path: 'team/trial-1' },
    });
    assert.equal(ok.body.run, '0/team/trial-1');
    assert.match(ok.body.command, new RegExp(`--out ${path.join(runs, 'team/trial-1').replace(/[/.]/g, '\\$&')}$`));
    for (const [out, why] of [
      [{ root: 0, path: '../escape' }, /may not leave the run root/],
      [{ root: 0, path: 'a/b/c/d' }, /more than 3 levels/],
      [{ root: 3, path: 'x' }, /no run root number 3/],
    ] as const) {
      const res = await call('POST', '/api/action/check', { config: '0/sim/default.yaml', out });
      assert.ok(res.status >= 400, JSON.stringify(out));
      assert.match(res.body.error, why);
    }
  });
});

describe('the checks before a launch', () => {
  const runs = tmpDir('skillopt-actions-runs-');
  const configs = fs.realpathSync(tmpDir('skillopt-configs-'));
  let fake: FakeProvider;
  let dash: RunningDashboard;
  let call: ReturnType<typeof clientOf>;
  const KEY = 'SKILLOPT_TEST_PREFLIGHT_KEY';
  before(async () => {
    fake = await startFakeProvider({
      fault: (r) =>
        r.headers.authorization === 'Bearer good-key'
          ? undefined
          : { status: 401, message: 'Incorrect API key provided: wr***ey.', code: 'invalid_api_key' },
      // A model that reasons before it answers spends a small cap on its reasoning: no text, cut off.
      respond: (r) =>
        r.body.model === 'thinker'
          ? { text: '', finish: 'length', usage: { input: 12, output: 16, reasoning: 16 } }
          : { text: 'OK' },
    });
    const sim = path.join(PROJECT_CONFIGS, 'sim/default.yaml');
    const target = (extra: string) =>
      `_base_: ${sim}\nmodel:\n  target:\n    backend: openai_compatible\n    model: fake-model\n    base_url: ${fake.url}/v1\n${extra}`;
    writeFiles(configs, {
      'compat.yaml': target(`    api_key_env: ${KEY}\n`),
      'thinker.yaml': target(`    api_key_env: ${KEY}\n`).replace('fake-model', 'thinker'),
      'no-key.yaml': `_base_: ${sim}\nmodel:\n  backend: openai_chat\n  target:\n    model: gpt-4o-mini\n    base_url: ${fake.url}/v1\n    api_key_env: SKILLOPT_TEST_UNSET_KEY\n  optimizer: {backend: sim, model: sim-1}\n`,
      'down.yaml': `_base_: ${sim}\nmodel:\n  target:\n    backend: openai_compatible\n    model: m\n    base_url: http://127.0.0.1:9/v1\n`,
      'no-data.yaml': `_base_: ${path.join(PROJECT_CONFIGS, 'tasks/example.yaml')}\nmodel:\n  backend: sim\n  target: {backend: sim, model: sim-1}\n  optimizer: {backend: sim, model: sim-1}\nenv:\n  data_path: /nonexistent/tickets.jsonl\n`,
    });
    dash = await startDashboard({ roots: [runs], host: '127.0.0.1', port: 0, configRoots: [configs] });
    call = clientOf(dash, dash.access.token);
  });
  after(async () => {
    delete process.env[KEY];
    await dash?.close();
    await fake?.close();
  });

  it('calls each endpoint once, as training would, and names the role whose key is refused', async () => {
    process.env[KEY] = 'wrong-key';
    const { body } = await call('POST', '/api/action/preflight', { config: '0/compat.yaml' });
    const r = body.preflight;
    assert.equal(r.ok, false);
    assert.deepEqual([r.data.ok, r.settings.ok], [true, true]);
    const [target, optimizer] = r.roles;
    assert.deepEqual([target.role, target.ok, target.endpoint], ['target', false, `${fake.url}/v1`]);
    assert.match(
      target.message,
      /^model\.target \(openai_compatible:fake-model\): the provider refused the credentials: check the API key/,
    );
    assert.match(
      target.fix,
      new RegExp(`the key in the environment variable ${KEY} \\(model\\.target\\.api_key_env\\)`),
    );
    assert.ok(!JSON.stringify(r).includes('wrong-key'), 'the key never reaches the page');
    assert.deepEqual([optimizer.role, optimizer.ok], ['optimizer', true]);
    // One call, no retry, with the role's key and model, asking for a few tokens.
    assert.equal(fake.requests.length, 1);
    const req = fake.requests[0]!;
    assert.deepEqual(
      [req.path, req.headers.authorization, req.body.model, req.body.max_tokens],
      ['/v1/chat/completions', 'Bearer wrong-key', 'fake-model', 16],
    );

    process.env[KEY] = 'good-key';
    const good = (await call('POST', '/api/action/preflight', { config: '0/compat.yaml' })).body.preflight;
    assert.equal(good.ok, true);
    assert.match(good.roles[0].message, /^answered in \d+ ms$/);
    const thinker = (await call('POST', '/api/action/preflight', { config: '0/thinker.yaml' })).body.preflight;
    assert.equal(thinker.roles[0].ok, true, JSON.stringify(thinker.roles[0]));
    assert.match(thinker.roles[0].message, /^reachable \(.*cut off by the output token limit/);
  });

  it('names a missing key, a server that does not answer, and data that does not load', async () => {
    const missing = (await call('POST', '/api/action/preflight', { config: '0/no-key.yaml' })).body.preflight;
    assert.equal(missing.roles[0].ok, false);
    assert.match(
      missing.roles[0].message,
      /model\.target: the OpenAI key is missing: set the environment variable SKILLOPT_TEST_UNSET_KEY/,
    );
    const down = (await call('POST', '/api/action/preflight', { config: '0/down.yaml' })).body.preflight;
    assert.equal(down.roles[0].ok, false);
    assert.match(down.roles[0].fix, /check that the server at http:\/\/127\.0\.0\.1:9\/v1 runs/);
    const noData = (await call('POST', '/api/action/preflight', { config: '0/no-data.yaml' })).body.preflight;
    assert.deepEqual([noData.ok, noData.data.ok, noData.settings.ok], [false, false, false]);
    assert.match(noData.data.message, /env\.data_path not found: \/nonexistent\/tickets\.jsonl/);
  });

  it('launches nothing when a check fails', async () => {
    process.env[KEY] = 'wrong-key';
    const before = fake.requests.length;
    const { status, body } = await call('POST', '/api/action/launch', { config: '0/compat.yaml' });
    assert.equal(status, 200);
    assert.equal(body.launched, false);
    assert.equal(body.preflight.roles[0].ok, false);
    assert.equal(fake.requests.length, before + 1, 'only the check call');
    assert.deepEqual(dash.jobs!.list(), []);
    assert.deepEqual(fs.readdirSync(runs), []);
  });
});
