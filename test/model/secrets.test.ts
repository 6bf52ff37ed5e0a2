/**
 * Secrets kept: a key in use, whatever variable holds it, and key-shaped strings a provider
 * echoes reach no file and no console line; credentials in a base URL stop the run at once
 * without being shown; a role whose every call fails alike is a configuration error.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { buildRoleModels } from '../../src/model/stack.ts';
import { FatalModelError, InfraError } from '../../src/model/types.ts';
import { ROOT, runCliAsync } from '../helpers/cli.ts';
import { startFakeProvider, textOfUser } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** A sim training run whose roles talk to `baseUrl` as an OpenAI-compatible server. */
function simOver(dir: string, baseUrl: string, role: Record<string, unknown> = {}): string {
  const r = {
    backend: 'openai_compatible',
    model: 'fake-model',
    base_url: baseUrl,
    max_retries: 1,
    backoff_s: 0.01,
    backoff_max_s: 0.02,
    ...role,
  };
  const file = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    file,
    stringify({
      model: { backend: 'openai_compatible', target: r, optimizer: r, reasoning_effort: '' },
      train: { num_epochs: 1, batch_size: 8 },
      env: {
        name: 'sim',
        skill_init: path.join(ROOT, 'configs/sim/seed_skill.md'),
        workers: 4,
        n_train: 8,
        n_val: 12,
        n_test: 8,
      },
      cache: { mode: 'off' },
    }),
  );
  return file;
}

/** Every file under `dir` that holds `text`. */
function filesHolding(dir: string, text: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => {
    const file = path.join(dir, f);
    return fs.statSync(file).isFile() && fs.readFileSync(file, 'utf8').includes(text);
  });
}

// A key of no familiar shape, in a variable of no familiar name: only its value can find it.
const KEY = 'zq7Lm2Xv9Rt4Wp8Kd3Hn';
const OTHERS = [
  'sk-proj-AbC123dEf456GhI789jKl',
  'ghp_0123456789abcdefghijABCDEFGHIJ012345',
  'github_pat_11ABCDEFG0123456789_abcdefghijklmnop',
  'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl',
];

describe('secrets', () => {
  it('a key a provider echoes in its errors reaches no file and no console line, nor do key-shaped strings', async () => {
    const fake = await startFakeProvider({
      fault: (r) => ({
        status: 500,
        message: `upstream refused ${String(r.headers.authorization)} (raw: ${String(r.headers.authorization).replace('Bearer ', '')}; also seen: ${OTHERS.join(', ')}; api-key: 0123456789abcdef0123456789abcdef)`,
      }),
    });
    try {
      const dir = tmpDir();
      // A directory that exists already keeps the failed run's files (one the run creates is removed when nothing was paid for).
      const out = path.join(dir, 'run');
      fs.mkdirSync(out);
      const r = await runCliAsync(
        ['train', '--config', simOver(dir, `${fake.url}/v1`, { api_key_env: 'LLM_CRED' }), '--out', out],
        { env: { LLM_CRED: KEY } },
      );
      assert.equal(r.status, 1, r.stderr);
      assert.ok(
        fake.requests.length > 0 && fake.requests.every((q) => q.headers.authorization === `Bearer ${KEY}`),
        'the key was sent',
      );
      const console = `${r.stdout}\n${r.stderr}`;
      for (const secret of [KEY, ...OTHERS, '0123456789abcdef0123456789abcdef']) {
        assert.ok(!console.includes(secret), `not on the console: ${secret}`);
        assert.deepEqual(filesHolding(out, secret), [], `in no file: ${secret}`);
      }
      // Redacted, not dropped: the errors still say what happened.
      assert.match(
        fs.readFileSync(path.join(out, 'calls.jsonl'), 'utf8'),
        /HTTP 500: upstream refused Bearer \*{4} \(raw: \*{4}; also seen: \*{4}/,
      );
      assert.match(r.stderr, /upstream refused Bearer \*{4}/);
      // Every call failed alike: a configuration error of the role, named as such.
      assert.match(
        r.stderr,
        /model\.target \(openai_compatible:fake-model\): the first 5 calls to http:\/\/127\.0\.0\.1:\d+\/v1 all failed the same way and none has succeeded/,
      );
    } finally {
      await fake.close();
    }
  });

  it("a key a 200 reply echoes is in no file: not the run's calls, not the response cache; a key shorter than 8 characters neither", async () => {
    const SHORT = 'x9Q';
    const fake = await startFakeProvider({
      respond: (r) => {
        const auth = String(r.headers.authorization);
        return { text: `you sent ${auth}; the key alone: ${auth.replace('Bearer ', '')}. Words such as x9Qz stay.` };
      },
    });
    try {
      const dir = tmpDir();
      const cacheFile = path.join(dir, 'cache', 'responses.sqlite');
      const role = (variable: string) => ({
        backend: 'openai_compatible',
        model: 'fake-model',
        base_url: `${fake.url}/v1`,
        api_key_env: variable,
        max_retries: 0,
      });
      const environment = { LONG_CRED: KEY, SHORT_CRED: SHORT };
      const { config } = configWith(
        { model: { target: role('LONG_CRED'), optimizer: role('SHORT_CRED') }, cache: { path: cacheFile } },
        environment,
      );
      const calls = path.join(dir, 'calls.jsonl');
      const m = await buildRoleModels(config, { environment, ledgerFile: calls });
      const ask = (content: string) => ({ purpose: 'rollout', messages: [{ role: 'user' as const, content }] });
      await m.target.complete(ask('what did I send?'));
      await m.optimizer.complete(ask('and now?'));
      m.close();
      assert.deepEqual(
        fake.requests.map((q) => q.headers.authorization),
        [`Bearer ${KEY}`, `Bearer ${SHORT}`],
        'each key was sent to its endpoint',
      );
      const files = fs.readdirSync(path.dirname(cacheFile)).map((f) => path.join(path.dirname(cacheFile), f));
      const bytes = Buffer.concat([...files, calls].map((f) => fs.readFileSync(f))).toString('latin1');
      assert.ok(!bytes.includes(KEY), 'the long key is in no file');
      assert.ok(!/(?<![A-Za-z0-9_])x9Q(?![A-Za-z0-9_])/.test(bytes), 'the short key is in no file');
      assert.match(bytes, /you sent Bearer \*{4}; the key alone: \*{4}\. Words such as x9Qz stay\./);
      // The cache answers with what it holds, the key replaced.
      const again = await buildRoleModels(config, { environment });
      assert.equal(
        (await again.optimizer.complete(ask('and now?'))).text,
        'you sent Bearer ****; the key alone: ****. Words such as x9Qz stay.',
      );
      again.close();
      assert.equal(fake.requests.length, 2, 'answered from the cache');
    } finally {
      await fake.close();
    }
  });

  it('credentials in base_url stop the run at once, named with the URL redacted, and are written nowhere', async () => {
    const fake = await startFakeProvider();
    try {
      const dir = tmpDir();
      const out = path.join(dir, 'run');
      const password = 'sk-urlsecret-0123456789';
      const port = new URL(fake.url).port;
      const r = await runCliAsync([
        'train',
        '--config',
        simOver(dir, `http://user:${password}@127.0.0.1:${port}/v1`),
        '--out',
        out,
      ]);
      assert.equal(r.status, 2, r.stdout);
      assert.match(
        r.stderr,
        new RegExp(
          `model\\.target\\.base_url holds credentials \\(http://\\*{4}@127\\.0\\.0\\.1:${port}/v1\\).*api_key_env`,
        ),
      );
      assert.ok(!`${r.stdout}${r.stderr}`.includes(password), 'not on the console');
      assert.deepEqual(filesHolding(out, password), []);
      assert.equal(fake.requests.length, 0, 'no call was made');
    } finally {
      await fake.close();
    }
  });
});

describe('a role whose every call fails alike', () => {
  it('is a configuration error after its first few calls, naming the role, the URL and what to check', async () => {
    // Every connection dropped as soon as it is made (a refused one stops the run instead: stop-and-reach.test.ts).
    const fake = await startFakeProvider({ fault: () => ({ kind: 'reset' }) });
    try {
      const role = {
        backend: 'openai_compatible',
        model: 'm',
        base_url: `${fake.url}/v1`,
        max_retries: 1,
        backoff_s: 0.01,
      };
      const { config } = configWith({ model: { target: role, optimizer: role }, cache: { mode: 'off' } });
      const m = await buildRoleModels(config, { environment: {} });
      const ask = { purpose: 'rollout', messages: [{ role: 'user' as const, content: 'hi' }] };
      for (let i = 0; i < 4; i++) await assert.rejects(m.target.complete(ask), InfraError);
      await assert.rejects(
        m.target.complete(ask),
        (e) =>
          e instanceof FatalModelError &&
          new RegExp(
            `^model\\.target \\(openai_compatible:m\\): the first 5 calls to ${fake.url.replace(/[./]/g, '\\$&')}/v1 all failed .*is the server running`,
          ).test(e.message),
      );
      m.close();
    } finally {
      await fake.close();
    }
  });

  it('is not when a call has ever succeeded, or when the failures differ', async () => {
    const fake = await startFakeProvider();
    try {
      const role = { backend: 'openai_compatible', model: 'm', base_url: `${fake.url}/v1`, max_retries: 0 };
      const { config } = configWith({ model: { target: role, optimizer: role }, cache: { mode: 'off' } });
      const m = await buildRoleModels(config, { environment: {} });
      const ask = (text: string) => ({ purpose: 'rollout', messages: [{ role: 'user' as const, content: text }] });
      await m.target.complete(ask('fine'));
      for (let i = 0; i < 8; i++) fake.faults.push({ status: 503 });
      for (let i = 0; i < 8; i++) await assert.rejects(m.target.complete(ask(`down ${i}`)), InfraError);
      for (let i = 0; i < 8; i++) fake.faults.push(i % 2 ? { status: 503 } : { kind: 'malformed' });
      for (let i = 0; i < 8; i++) await assert.rejects(m.optimizer.complete(ask(`mixed ${i}`)), InfraError);
      m.close();
    } finally {
      await fake.close();
    }
  });

  it('counts the first calls sent, not the first to end: fast refusals of long prompts do not outrun an answer sent before them', async () => {
    const fake = await startFakeProvider({
      fault: (r) =>
        textOfUser(r).startsWith('long')
          ? {
              status: 400,
              message:
                "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens.",
            }
          : undefined,
      respond: async (r) => {
        if (textOfUser(r) === 'slow') await new Promise((resolve) => setTimeout(resolve, 300));
        return { text: 'ok' };
      },
    });
    try {
      const role = { backend: 'openai_compatible', model: 'm', base_url: `${fake.url}/v1`, max_retries: 0 };
      const { config } = configWith({ model: { target: role, optimizer: role }, cache: { mode: 'off' } });
      const m = await buildRoleModels(config, { environment: {} });
      const ask = (text: string) => ({ purpose: 'rollout', messages: [{ role: 'user' as const, content: text }] });
      const slow = m.target.complete(ask('slow'));
      const refused = await Promise.allSettled([1, 2, 3, 4, 5].map((i) => m.target.complete(ask(`long ${i}`))));
      assert.ok(
        refused.every((r) => r.status === 'rejected' && r.reason instanceof InfraError),
        'each an error of its own item',
      );
      assert.equal((await slow).text, 'ok');
      m.close();
    } finally {
      await fake.close();
    }
  });
});
