import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { z } from 'zod';
import Database from 'better-sqlite3';
import { cacheKey, ResponseCache } from '../../src/model/cache.ts';
import { requestKey } from '../../src/model/request-key.ts';
import { buildRoleModels, type ModelEvent } from '../../src/model/stack.ts';
import { FatalModelError, type ChatRequest } from '../../src/model/types.ts';
import { ROOT, TS_IMPORT } from '../helpers/cli.ts';
import { fakeProviderFetch, type InProcessFake } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** Commits in a SQLite write-ahead log: frames whose header holds the database size after the commit (non-zero). */
function walCommits(db: string): number {
  let wal: Buffer;
  try {
    wal = fs.readFileSync(`${db}-wal`);
  } catch {
    return 0;
  }
  const pageSize = wal.readUInt32BE(8);
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize)
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  return commits;
}

const ask = (text: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  purpose: 'rollout',
  messages: [{ role: 'user', content: text }],
  ...extra,
});

describe('the response cache', () => {
  let fake: InProcessFake;
  let dir: string;
  before(async () => {
    fake = fakeProviderFetch({
      respond: (r) => ({
        text: `answer ${fake.requests.length}: ${JSON.stringify(r.body.messages.at(-1).content)}`,
        usage: { input: 7, output: 3 },
      }),
    });
    dir = tmpDir();
  });

  async function models(
    mode: string,
    role: Record<string, unknown> = {},
    file = path.join(dir, 'responses.sqlite'),
    onEvent?: (e: ModelEvent) => void,
    ledgerFile?: string,
  ) {
    const r = { backend: 'openai_compatible', model: 'm', base_url: `${fake.url}/v1`, max_retries: 0, ...role };
    const { config } = configWith({ model: { target: r, optimizer: r }, cache: { mode, path: file } });
    return buildRoleModels(config, {
      fetch: fake.fetch,
      environment: {},
      ...(onEvent ? { onEvent } : {}),
      ...(ledgerFile ? { ledgerFile } : {}),
    });
  }

  it('hits on an identical request, in another run too, and costs nothing then', async () => {
    const a = await models('read_write');
    const first = await a.target.complete(ask('same'));
    const n = fake.requests.length;
    const second = await a.target.complete(ask('same'));
    assert.equal(fake.requests.length, n);
    assert.equal(second.text, first.text);
    assert.equal(second.from, 'cache');
    assert.deepEqual(second.usage, first.usage);
    a.close();
    const b = await models('read_write');
    assert.equal((await b.target.complete(ask('same'))).from, 'cache');
    assert.equal(fake.requests.length, n);
    assert.equal(b.ledger.totals().calls, 0);
    assert.equal(b.ledger.all()[0]!.cost_usd, 0);
    b.close();
  });

  it('misses when any parameter, the sample index, the model, the base URL or an image differs', async () => {
    // The cache's own warnings (a write or read it could not do) explain an unexpected miss.
    const warnings: string[] = [];
    const onEvent = (e: ModelEvent) => void (e.type === 'log' && warnings.push(e.message));
    const m = await models('read_write', {}, undefined, onEvent);
    await m.target.complete(ask('base'));
    const count = () => fake.requests.length;
    let n = count();
    const variants: ChatRequest[] = [
      ask('base', { sample: 1 }),
      ask('base', { temperature: 0.5 }),
      ask('base', { maxOutputTokens: 99 }),
      ask('base', { reasoningEffort: 'high' }),
      ask('base', { system: 'be brief' }),
      ask('base', { schema: z.object({ a: z.string() }) }),
      ask('base', { tools: [{ name: 't', description: 'd', parameters: { type: 'object' } }] }),
      ask('base!'),
    ];
    for (const v of variants) {
      await m.target.complete(v);
      assert.equal(count(), n + 1, `a miss expected for ${JSON.stringify({ ...v, schema: Boolean(v.schema) })}`);
      n = count();
    }
    for (const role of [
      { model: 'other' },
      { temperature: 0.1 },
      { options: { extra_body: { top_k: 5 } } },
      { base_url: `${fake.url}/v1/` },
    ]) {
      const other = await models('read_write', role, undefined, onEvent);
      await other.target.complete(ask('base'));
      const expectMiss = !('base_url' in role);
      if (count() !== n + (expectMiss ? 1 : 0)) {
        // An unexpected miss (seen rarely under load): what went to the provider, and what the cache file holds then.
        const last = fake.requests.at(-1);
        const rows = new ResponseCache(path.join(dir, 'responses.sqlite'));
        const held = rows.count();
        rows.close();
        assert.fail(
          `${JSON.stringify(role)}: ${count() - n} provider calls; the last to ${last?.path} with ${JSON.stringify(last?.body.messages)}; ${held} answers in the cache file; the cache's warnings: ${JSON.stringify(warnings)}`,
        );
      }
      n = count();
      other.close();
    }
    const img = path.join(dir, 'img.png');
    fs.writeFileSync(img, 'one');
    const withImage = ask('', {
      messages: [{ role: 'user', content: [{ type: 'image', image: img, mediaType: 'image/png' }] }],
    });
    await m.target.complete(withImage);
    await m.target.complete(withImage);
    assert.equal(count(), n + 1);
    fs.writeFileSync(img, 'two');
    await m.target.complete(withImage);
    assert.equal(count(), n + 2);
    m.close();
  });

  it('an answer queued by one cache of this process is seen by another on the same file before it is written', () => {
    const file = path.join(tmpDir(), 'responses.sqlite');
    const a = new ResponseCache(file);
    const b = new ResponseCache(file);
    const answer = { text: 'queued', usage: { input: 1, output: 1, cached: 0, reasoning: 0 } };
    a.store('k', 'm', answer, () => {});
    // No turn of the event loop has passed: the answer is still queued, not in the file.
    assert.deepEqual(b.get('k'), answer);
    a.close();
    b.close();
    const c = new ResponseCache(file);
    assert.deepEqual(c.get('k'), answer, 'and it is written');
    c.close();
  });

  it('never stores errors', async () => {
    const m = await models('read_write');
    fake.faults.push({ status: 503 });
    await assert.rejects(m.target.complete(ask('flaky')));
    const n = fake.requests.length;
    const res = await m.target.complete(ask('flaky'));
    assert.equal(res.from, 'provider');
    assert.equal(fake.requests.length, n + 1);
    m.close();
  });

  it('replay refuses a call missing from the cache and answers recorded ones', async () => {
    const rec = await models('read_write');
    await rec.target.complete(ask('recorded'));
    rec.close();
    const replay = await models('replay');
    const n = fake.requests.length;
    assert.equal((await replay.target.complete(ask('recorded'))).from, 'cache');
    await assert.rejects(
      replay.target.complete(ask('never asked')),
      (e) => e instanceof FatalModelError && /replay/.test(e.message),
    );
    assert.equal(fake.requests.length, n);
    replay.close();
  });

  it('read_only uses the cache but adds nothing; off neither reads nor writes', async () => {
    const file = path.join(dir, 'ro.sqlite');
    const ro = await models('read_only', {}, file);
    await ro.target.complete(ask('ro'));
    await ro.target.complete(ask('ro'));
    ro.close();
    const cache = new ResponseCache(file);
    assert.equal(cache.count(), 0);
    cache.close();
    // off with a cache file that holds the answer: the provider is called anyway, and nothing is added.
    const filled = path.join(dir, 'filled.sqlite');
    const rw = await models('read_write', {}, filled);
    await rw.target.complete(ask('asked before'));
    rw.close();
    const off = await models('off', {}, filled);
    const n = fake.requests.length;
    assert.equal((await off.target.complete(ask('asked before'))).from, 'provider');
    await off.target.complete(ask('never asked'));
    assert.equal(fake.requests.length, n + 2);
    off.close();
    const after = new ResponseCache(filled);
    assert.equal(after.count(), 1);
    after.close();
    // off with a cache path that does not exist: no file is created.
    const never = path.join(dir, 'off-never.sqlite');
    await (await models('off', {}, never)).target.complete(ask('x'));
    assert.equal(fs.existsSync(never), false);
  });

  it('structured answers are validated again when served from the cache', async () => {
    const m = await models('read_write');
    const schema = z.object({ answer: z.string() });
    fake.faults.length = 0;
    const jsonFake = fakeProviderFetch({ respond: () => ({ text: '{"answer": "yes"}' }) });
    try {
      const r = { backend: 'openai_compatible', model: 'j', base_url: `${jsonFake.url}/v1` };
      const { config } = configWith({
        model: { target: r, optimizer: r },
        cache: { mode: 'read_write', path: path.join(dir, 'json.sqlite') },
      });
      const jm = await buildRoleModels(config, { fetch: jsonFake.fetch, environment: {} });
      assert.deepEqual((await jm.target.complete(ask('q', { schema }))).parsed, { answer: 'yes' });
      const hit = await jm.target.complete(ask('q', { schema }));
      assert.equal(hit.from, 'cache');
      assert.deepEqual(hit.parsed, { answer: 'yes' });
      jm.close();
    } finally {
      m.close();
    }
  });

  it('identical requests in flight at once make one provider call; each is recorded as it was served', async () => {
    const slow = fakeProviderFetch({
      latencyMs: 150,
      respond: () => ({ text: 'the one answer', usage: { input: 7, output: 3 } }),
    });
    const r = { backend: 'openai_compatible', model: 'm', base_url: `${slow.url}/v1`, max_retries: 0 };
    const { config } = configWith({
      model: { target: r, optimizer: r },
      cache: { mode: 'read_write', path: path.join(dir, 'joined.sqlite') },
    });
    const m = await buildRoleModels(config, { fetch: slow.fetch, environment: {} });
    const answers = await Promise.all([
      m.target.complete(ask('same')),
      m.target.complete(ask('same')),
      m.target.complete(ask('same')),
      m.target.complete(ask('other')),
    ]);
    assert.equal(slow.requests.length, 2, 'one call for the three identical requests, one for the other');
    assert.deepEqual(
      answers.map((a) => a.text),
      ['the one answer', 'the one answer', 'the one answer', 'the one answer'],
    );
    assert.deepEqual(
      m.ledger
        .all()
        .map((c) => c.from)
        .sort(),
      ['cache', 'cache', 'provider', 'provider'],
    );
    assert.equal(m.ledger.totals().calls, 2);
    // A repeated sample is a distinct request: never joined.
    await Promise.all([
      m.target.complete(ask('sampled', { sample: 1 })),
      m.target.complete(ask('sampled', { sample: 2 })),
    ]);
    assert.equal(slow.requests.length, 4);
    m.close();
  });

  it('another process holding the write lock costs no paid reply: it is recorded, the cache failure is a warning', async () => {
    const file = path.join(dir, 'locked.sqlite');
    new ResponseCache(file).close();
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    other.prepare("INSERT INTO responses (key, model, created, response) VALUES ('held', 'm', 'now', '{}')").run();
    const events: ModelEvent[] = [];
    const calls = path.join(dir, 'locked-calls.jsonl');
    const m = await models('read_write', {}, file, (e) => events.push(e), calls);
    try {
      const before = fake.requests.length;
      const res = await m.target.complete(ask('paid while locked'));
      assert.equal(res.from, 'provider');
      assert.equal(fake.requests.length, before + 1);
      const [call] = m.ledger.all().slice(-1);
      assert.equal(call!.from, 'provider');
      assert.equal(call!.error, undefined);
      // The paid reply is in the run's journal, to be replayed on resume.
      const line = fs
        .readFileSync(calls, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .find((l) => l.key === call!.key);
      assert.equal(line?.response?.text, res.text);
      // Answers are written at the end of the event loop's turn: the turn queued after the call's has seen the write fail.
      await new Promise((resolve) => setImmediate(resolve));
      const warning = events.find((e) => e.type === 'log' && e.level === 'warn');
      assert.match(
        warning && 'message' in warning ? warning.message : '',
        /response cache .*locked\.sqlite.* could not store/,
      );
    } finally {
      other.exec('ROLLBACK');
      other.close();
      m.close();
    }
  });

  it('answers that arrive together are written in one transaction, and read back before it is written', async () => {
    const file = path.join(dir, 'batched.sqlite');
    const m = await models('read_write', {}, file);
    const asks = Array.from({ length: 20 }, (_, i) => ask(`batched ${i}`));
    const before = walCommits(file);
    await Promise.all(asks.map((a) => m.target.complete(a)));
    // Asked again at once, before the write: the queued answers are served.
    const again = await Promise.all(asks.map((a) => m.target.complete(a)));
    assert.deepEqual(new Set(again.map((r) => r.from)), new Set(['cache']));
    await new Promise((resolve) => setImmediate(resolve));
    const commits = walCommits(file) - before;
    m.close();
    assert.ok(commits >= 1 && commits <= 2, `${commits} commits for 20 answers`);
    const cache = new ResponseCache(file);
    assert.equal(cache.count(), 20);
    cache.close();
  });

  it("serializes a request once for the run's record and the cache, under the same keys as when each serialized it", async () => {
    const m = await models(
      'read_write',
      {},
      path.join(dir, 'once.sqlite'),
      undefined,
      path.join(dir, 'once-calls.jsonl'),
    );
    let serialized = 0;
    const message = {
      role: 'user' as const,
      content: 'counted',
      toJSON: () => {
        serialized++;
        return { role: 'user', content: 'counted' };
      },
    };
    await m.target.complete(ask('', { messages: [message] }));
    m.close();
    assert.equal(serialized, 1);
    // The keys of caches and calls.jsonl files written before (when each key serialized the request itself).
    const req = ask('keys', { system: 'be brief', sample: 2 });
    assert.equal(requestKey('compat:m', req), 'b2018a3d7485744161daf871a851ca453e5bd6282330e3b0495311f90ed18a94');
    assert.equal(
      cacheKey('compat:m', req, { backend: 'openai_compatible', temperature: 0.3 }),
      'c55e860b3afffc0d9a2b01134e6564bab0d491b34a73117e55ea592ae4f92081',
    );
  });

  it('two processes write the same cache at once without losing an entry', async () => {
    const file = path.join(dir, 'shared.sqlite');
    const script = path.join(ROOT, 'test/model/cache-writer.ts');
    const run = (tag: string) =>
      new Promise<number>((resolve, reject) => {
        const child = spawn(process.execPath, [...TS_IMPORT, script, file, tag, '300'], {
          cwd: ROOT,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let err = '';
        child.stderr.on('data', (d) => (err += d));
        child.on('close', (code) => (code === 0 ? resolve(code) : reject(new Error(err))));
      });
    await Promise.all([run('a'), run('b')]);
    const cache = new ResponseCache(file);
    assert.equal(cache.count(), 600);
    assert.equal(cache.get('a-299')?.text, 'a-299');
    assert.equal(cache.get('b-0')?.text, 'b-0');
    cache.close();
  });
});
