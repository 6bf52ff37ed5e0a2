/**
 * `skillopt eval` goes through the model stack training uses: the real command, as a child
 * process, against a fake OpenAI-compatible server on 127.0.0.1 that injects faults. Each case
 * names its own model, and the server's behaviour depends on the model: first attempts failing,
 * a hung connection, a rejected key, an unknown model, a slow server, plain answers.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { BIN, ROOT } from '../../helpers/cli.ts';
import {
  startFakeProvider,
  textOfUser,
  type Fault,
  type FakeProvider,
  type Recorded,
} from '../../helpers/fake-provider.ts';
import { tmpDir, writeFiles } from '../../helpers/tmp.ts';
import { runShell } from '../../envs/shell.ts';

const ITEMS = 10;
const KEY = 'sk-test-0123456789abcdef';
const WORKERS = 6;

/** Items "Echo wN" → "wN"; the server answers every one right. */
function project(dir: string) {
  const line = (n: number) => JSON.stringify({ id: `i${n}`, input: `Echo w${n}`, answer: `w${n}` });
  writeFiles(dir, {
    'train.jsonl': [101, 102].map(line).join('\n'),
    'val.jsonl': [103, 104].map(line).join('\n'),
    'test.jsonl': Array.from({ length: ITEMS }, (_, n) => line(n)).join('\n'),
    'skill.md': 'Repeat the word.',
  });
}

function config(
  dir: string,
  name: string,
  model: string,
  url: string,
  target: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): string {
  const role = {
    backend: 'openai_compatible',
    model,
    base_url: `${url}/v1`,
    max_retries: 5,
    backoff_s: 0.01,
    backoff_max_s: 0.05,
    timeout_s: 30,
    ...target,
  };
  const file = path.join(dir, `${name}.yaml`);
  fs.writeFileSync(
    file,
    stringify({
      model: { target: role, optimizer: { ...role, model: 'unused' }, reasoning_effort: '' },
      env: {
        name: 'tasks',
        train_file: 'train.jsonl',
        val_file: 'val.jsonl',
        test_file: 'test.jsonl',
        workers: WORKERS,
      },
      cache: { mode: 'off' },
      ...extra,
    }),
  );
  return file;
}

const word = (r: Recorded) => /Echo (w\d+)/.exec(textOfUser(r))?.[1] ?? '';

describe('skillopt eval uses the training model stack', () => {
  let fake: FakeProvider;
  let dir: string;
  const runs: Record<string, { status: number | null; stdout: string; stderr: string; out: string }> = {};
  const seen = new Set<string>();

  const faultFor = (r: Recorded): Fault | undefined => {
    const model = r.body.model as string;
    const key = `${model}/${word(r)}`;
    const first = !seen.has(key);
    seen.add(key);
    // A gateway that echoes the key it was given.
    if (model === 'badkey')
      return {
        status: 401,
        message: `Invalid API key: ${String(r.headers.authorization).replace(/^Bearer /, '')}`,
        code: 'invalid_api_key',
      };
    if (model === 'nope')
      return {
        status: 404,
        message: 'The model `nope` does not exist or you do not have access to it.',
        code: 'model_not_found',
      };
    // Half the items fail on their first attempt.
    if (model === 'flaky' && first && Number(word(r).slice(1)) % 2 === 0)
      return { status: 503, message: 'The server is overloaded' };
    if (model === 'hang' && first && word(r) === 'w3') return { kind: 'hang' };
    return undefined;
  };

  const evalRun = async (
    name: string,
    model: string,
    target: Record<string, unknown> = {},
    extra: Record<string, unknown> = {},
    out = path.join(dir, `out-${name}`),
  ) => {
    const file = config(dir, name, model, fake.url, target, extra);
    const cmd = [process.execPath, BIN, 'eval', '--config', file, '--skill', path.join(dir, 'skill.md'), '--out', out];
    const r = await runShell(
      cmd.map((a) => `'${a}'`).join(' '),
      ROOT,
      {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        XDG_CACHE_HOME: path.join(dir, 'cache'),
        OPENAI_COMPATIBLE_API_KEY: KEY,
      },
      60_000,
    );
    runs[name] = { ...r, out };
  };

  before(async () => {
    fake = await startFakeProvider({
      latencyMs: 15,
      fault: faultFor,
      respond: (r) => ({ text: `<answer>${word(r)}</answer>` }),
    });
    dir = tmpDir();
    project(dir);
    const cache = { cache: { mode: 'read_write', path: path.join(dir, 'responses.sqlite') } };
    await Promise.all([
      evalRun('flaky', 'flaky'),
      evalRun('hang', 'hang', { timeout_s: 0.5 }),
      evalRun('badkey', 'badkey'),
      evalRun('nope', 'nope'),
      evalRun('narrow', 'narrow', { concurrency: 2 }),
      evalRun('cached', 'cached', {}, cache),
    ]);
    // The same evaluation again into another directory (the test split scored again, as it may be
    // when asked): every answer comes from the response cache.
    await evalRun('cached-again', 'cached', {}, { ...cache, evaluation: { audit: { rescore_test: true } } });
  });
  after(() => fake.close());

  const summary = (name: string) =>
    JSON.parse(fs.readFileSync(path.join(runs[name]!.out, 'eval_summary.json'), 'utf8'));
  const calls = (name: string) =>
    fs
      .readFileSync(path.join(runs[name]!.out, 'calls.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
  const requests = (model: string) => fake.requests.filter((r) => r.body.model === model);

  it('failed first attempts are retried: every item is scored, and the ledger records the retries', () => {
    const r = runs.flaky!;
    assert.equal(r.status, 0, r.stderr);
    const s = summary('flaky');
    assert.deepEqual([s.n_items, s.cells[0].errors, s.hard], [ITEMS, 0, 1]);
    const recs = calls('flaky');
    assert.equal(recs.length, ITEMS);
    assert.equal(recs.filter((c) => c.retries === 1).length, ITEMS / 2);
    assert.equal(requests('flaky').length, ITEMS + ITEMS / 2);
    // While calls failed, the console said so, with the last error.
    assert.match(
      r.stderr,
      /\[model\.target openai_compatible:flaky\] \d+ failed attempts?.*retrying; last: .*HTTP 503: The server is overloaded/,
    );
  });

  it('a hung connection times out after timeout_s and is retried', () => {
    const r = runs.hang!;
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual([summary('hang').n_items, summary('hang').cells[0].errors], [ITEMS, 0]);
    assert.ok(calls('hang').find((c) => c.response.text === '<answer>w3</answer>').retries >= 1);
    // The hung attempt never answers: only the per-call timeout can have ended it, and the retry answered.
    assert.equal(requests('hang').filter((r) => word(r) === 'w3').length, 2);
  });

  it('a rejected key stops at once with exit 1 and what to check; nothing is scored', () => {
    const r = runs.badkey!;
    assert.equal(r.status, 1, r.stdout);
    assert.match(r.stderr, /model\.target \(openai_compatible:badkey\): the provider refused the credentials/);
    assert.match(r.stderr, /Invalid API key: \*{4}/);
    assert.ok(
      !r.stderr.includes(KEY) && !fs.readFileSync(path.join(r.out, 'calls.jsonl'), 'utf8').includes(KEY),
      'the key is redacted',
    );
    assert.equal(fs.existsSync(path.join(r.out, 'eval_summary.json')), false);
    assert.ok(
      requests('badkey').length <= WORKERS,
      `${requests('badkey').length} requests: no retries, no further items`,
    );
  });

  it('an unknown model (404) stops at once with exit 1', () => {
    const r = runs.nope!;
    assert.equal(r.status, 1, r.stdout);
    assert.match(
      r.stderr,
      /the model, deployment or endpoint does not exist: check the model name and base_url.*The model `nope` does not exist/,
    );
    assert.equal(fs.existsSync(path.join(r.out, 'eval_summary.json')), false);
    assert.ok(requests('nope').length <= WORKERS);
  });

  it("the role's concurrency limits the calls in flight, below env.workers", () => {
    const r = runs.narrow!;
    assert.equal(r.status, 0, r.stderr);
    const reqs = requests('narrow');
    assert.equal(reqs.length, ITEMS);
    // At each arrival, the requests of this model still open (a reply is sent before the next request can come).
    const overlap = reqs.map((q) => reqs.filter((o) => o.at <= q.at && (o.done === undefined || o.done > q.at)).length);
    assert.equal(Math.max(...overlap), 2, `open at each arrival: ${overlap}`);
  });

  it('the response cache answers a repeated evaluation without calling the provider', () => {
    assert.equal(runs.cached!.status, 0, runs.cached!.stderr);
    assert.equal(runs['cached-again']!.status, 0, runs['cached-again']!.stderr);
    assert.equal(requests('cached').length, ITEMS);
    const again = calls('cached-again');
    assert.equal(again.length, ITEMS);
    assert.ok(again.every((c) => c.from === 'cache'));
    assert.equal(summary('cached-again').hard, 1);
  });
});
