import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildRoleModels } from '../../src/model/stack.ts';
import { FatalModelError, InfraError } from '../../src/model/types.ts';
import { jsonLines } from '../../src/run/atomic.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';
import { tmpDir } from '../helpers/tmp.ts';

const MB = 1024 * 1024;

describe('the reply size limit (model.<role>.max_reply_bytes)', () => {
  let fake: FakeProvider;
  before(async () => {
    // "big" asks for a 3 MB reply; "chunked" for the same without a Content-Length; anything else gets a short one.
    fake = await startFakeProvider({
      respond: (r) => {
        const asked = JSON.stringify(r.body);
        const text = asked.includes('big') || asked.includes('chunked') ? 'x'.repeat(3 * MB) : 'a short reply';
        return { text, ...(asked.includes('chunked') ? { headers: { 'transfer-encoding': 'chunked' } } : {}) };
      },
    });
  });
  after(() => fake.close());

  const roles = {
    openai_compatible: (url: string) => ({ backend: 'openai_compatible', model: 'fake-model', base_url: `${url}/v1` }),
    openai_chat: (url: string) => ({ backend: 'openai_chat', model: 'gpt-4o', base_url: `${url}/v1` }),
    anthropic: (url: string) => ({ backend: 'anthropic', model: 'claude-sonnet-4-5', base_url: `${url}/v1` }),
  };

  for (const [backend, role] of Object.entries(roles)) {
    it(`${backend}: a reply over the limit fails that call once, named, recorded in the ledger, not retried`, async () => {
      const ledgerFile = path.join(tmpDir(), 'calls.jsonl');
      const target = { ...role(fake.url), max_reply_bytes: MB, max_retries: 3, backoff_s: 0.01 };
      const { config } = configWith({ model: { target, optimizer: target }, cache: { mode: 'off' } });
      const models = await buildRoleModels(config, {
        environment: { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test' },
        ledgerFile,
      });
      const ask = (text: string) =>
        models.target.complete({ purpose: 'rollout', messages: [{ role: 'user', content: text }] });
      for (const word of ['big', 'chunked']) {
        const before = fake.requests.length;
        await assert.rejects(ask(`a ${word} one`), (e: unknown) => {
          assert.ok(e instanceof InfraError, String(e));
          assert.match(e.message, /the reply is larger than model\.target\.max_reply_bytes=1048576/);
          return true;
        });
        assert.equal(fake.requests.length - before, 1, `${word}: asked once`);
      }
      assert.equal((await ask('a small one')).text, 'a short reply');
      models.ledger.close();
      const lines = [...jsonLines<{ error?: string; from: string }>(ledgerFile)].map((l) => l.value);
      assert.equal(lines.filter((l) => /max_reply_bytes=1048576/.test(l.error ?? '')).length, 2);
      assert.equal(lines.filter((l) => !l.error).length, 1);
    });
  }

  it('a role whose every reply is over the limit stops the run with advice about the limit, not about the context size', async () => {
    const target = { ...roles.openai_compatible(fake.url), max_reply_bytes: MB, max_retries: 0 };
    const { config } = configWith({ model: { target, optimizer: target }, cache: { mode: 'off' } });
    const models = await buildRoleModels(config, { environment: {} });
    const ask = () =>
      models.target.complete({ purpose: 'rollout', messages: [{ role: 'user', content: 'a big one' }] });
    for (let i = 0; i < 4; i++) await assert.rejects(ask(), InfraError);
    await assert.rejects(ask(), (e: unknown) => {
      assert.ok(e instanceof FatalModelError, String(e));
      assert.match(e.message, /every reply is larger than the limit: raise model\.target\.max_reply_bytes/);
      assert.doesNotMatch(e.message, /context size/);
      return true;
    });
    models.close();
  });

  it('the fake server sends the chunked reply without a length, so the limit is checked as bytes arrive', async () => {
    const r = await fetch(`${fake.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'chunked' }] }),
    });
    assert.equal(r.headers.get('content-length'), null);
    assert.equal(r.headers.get('transfer-encoding'), 'chunked');
    await r.arrayBuffer();
  });

  it('defaults to 8 MB', () => {
    const { config } = configWith({ model: { target: roles.openai_compatible('http://127.0.0.1:1') } });
    assert.equal(config.model.target.max_reply_bytes, 8 * MB);
  });
});
