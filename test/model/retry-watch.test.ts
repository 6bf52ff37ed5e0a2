/**
 * The console while calls fail: the retry watch turns failed attempts into throttled events per
 * role, and a server that refuses connections is named, with what to check, once.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { CallFailure } from '../../src/model/failure.ts';
import { RetryWatch, type ModelEvent } from '../../src/model/retry-watch.ts';
import { buildRoleModels } from '../../src/model/stack.ts';
import { formatEvent } from '../../src/run/reporter.ts';
import { EventLog, type RunEvent } from '../../src/run/events.ts';
import { runCli } from '../helpers/cli.ts';
import { startFakeProvider } from '../helpers/fake-provider.ts';
import { configWith } from '../helpers/model-config.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

const server = (message = 'openai_compatible:m: HTTP 503: overloaded') => new CallFailure(message, 'server', 503);

describe('the retry watch', () => {
  it('reports the first failure of a role at once, then at most one event per interval, with the count since the last', () => {
    const events: ModelEvent[] = [];
    let now = 0;
    const watch = new RetryWatch(
      (e) => events.push(e),
      5000,
      () => now,
    );
    watch.failed('target', 'm', 'http://h/v1', server('first'), false);
    for (let i = 0; i < 9; i++) {
      now += 400;
      watch.failed('target', 'm', 'http://h/v1', server(`again ${i}`), false);
    }
    assert.equal(events.length, 1, 'nine more failures within 5 s: no new event');
    now = 5000;
    watch.failed('target', 'm', 'http://h/v1', server('later'), true);
    watch.failed('optimizer', 'o', 'http://h/v1', server('other role'), false);
    assert.deepEqual(
      events.map((e) => (e.type === 'model_retry' ? [e.role, e.failures, e.total, e.retrying, e.last_error] : [])),
      [
        ['target', 1, 1, true, 'first'],
        ['target', 10, 11, false, 'later'],
        ['optimizer', 1, 1, true, 'other role'],
      ],
    );
  });

  it('a server that cannot be reached is named with what to check, once per role; errors are redacted in the event log', () => {
    const events: ModelEvent[] = [];
    const log = new EventLog();
    const logged: RunEvent[] = [];
    log.on((e) => logged.push(e));
    const watch = new RetryWatch(
      (e) => {
        events.push(e);
        log.emit(e);
      },
      5000,
      () => 0,
    );
    const refused = new CallFailure(
      'openai_compatible:m: connection failed: connect ECONNREFUSED 127.0.0.1:9 key sk-secret-0123456789',
      'network',
    );
    watch.failed('target', 'openai_compatible:m', 'http://127.0.0.1:9/v1', refused, false);
    watch.failed('target', 'openai_compatible:m', 'http://127.0.0.1:9/v1', refused, false);
    watch.failed('judge', 'openai_compatible:j', 'http://127.0.0.1:9/v1', refused, false);
    const hints = events.flatMap((e) => (e.type === 'model_retry' && e.hint ? [e.hint] : []));
    assert.deepEqual(hints, [
      "model.target cannot reach http://127.0.0.1:9/v1: is the server running and listening there? Check model.target.base_url (or the backend's *_BASE_URL variable)",
      "model.judge cannot reach http://127.0.0.1:9/v1: is the server running and listening there? Check model.judge.base_url (or the backend's *_BASE_URL variable)",
    ]);
    const first = logged[0] as Extract<RunEvent, { type: 'model_retry' }>;
    assert.doesNotMatch(first.last_error, /sk-secret/);
    const line = formatEvent(first)!;
    assert.match(
      line,
      /^ {2}\[model\.target openai_compatible:m\] 1 failed attempt, retrying; last: .*ECONNREFUSED.*\n {2}model\.target cannot reach http:\/\/127\.0\.0\.1:9\/v1/,
    );
  });

  it('the stack reports every failed attempt of its calls (through the scheduler)', async () => {
    const fake = await startFakeProvider();
    try {
      const role = {
        backend: 'openai_compatible',
        model: 'm',
        base_url: `${fake.url}/v1`,
        max_retries: 3,
        backoff_s: 0.01,
      };
      const { config } = configWith({ model: { target: role, optimizer: role }, cache: { mode: 'off' } });
      const events: ModelEvent[] = [];
      const m = await buildRoleModels(config, { environment: {}, onEvent: (e) => events.push(e) });
      fake.faults.push({ status: 503, message: 'busy' }, { status: 503, message: 'busy' });
      await m.target.complete({ purpose: 'rollout', messages: [{ role: 'user', content: 'x' }] });
      assert.equal(events.length, 1, 'two failures within the interval: one event');
      assert.deepEqual(events[0], {
        type: 'model_retry',
        role: 'target',
        model: 'openai_compatible:m',
        failures: 1,
        total: 1,
        kind: 'server',
        retrying: true,
        last_error: 'openai_compatible:m: HTTP 503: busy',
      });
    } finally {
      await fake.close();
    }
  });
});

describe('a run whose server is not running', () => {
  it('says within its first failed call, once, which role cannot reach which URL and what to check', async () => {
    // A port that refuses connections: listen, note it, close.
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const url = `http://127.0.0.1:${port}/v1`;
    const dir = tmpDir();
    const line = (n: number) => JSON.stringify({ id: `i${n}`, input: `Echo w${n}`, answer: `w${n}` });
    const role = {
      backend: 'openai_compatible',
      model: 'local',
      base_url: url,
      max_retries: 2,
      backoff_s: 0.01,
      backoff_max_s: 0.02,
    };
    writeFiles(dir, {
      'data/train.jsonl': [1, 2, 3, 4].map(line).join('\n'),
      'data/val.jsonl': [5, 6, 7, 8].map(line).join('\n'),
      'data/test.jsonl': [9, 10].map(line).join('\n'),
      'skill.md': 'Repeat the word.',
      'c.yaml': stringify({
        model: { target: role, optimizer: role, reasoning_effort: '' },
        env: {
          name: 'tasks',
          train_file: 'data/train.jsonl',
          val_file: 'data/val.jsonl',
          test_file: 'data/test.jsonl',
          skill_init: 'skill.md',
          workers: 4,
        },
        train: { num_epochs: 1, batch_size: 2 },
        cache: { mode: 'off' },
      }),
    });
    // The directory exists already, so the failed run's event log stays in it (a directory the run
    // creates itself is removed when nothing was paid for).
    const out = path.join(dir, 'run');
    fs.mkdirSync(out);
    const r = runCli(['train', '--config', path.join(dir, 'c.yaml'), '--out', out], { cwd: dir, env: { HOME: dir } });
    assert.equal(r.status, 1, r.stdout);
    const console = `${r.stdout}${r.stderr}`;
    const hint = `model.target cannot reach ${url}: is the server running and listening there? Check model.target.base_url`;
    assert.equal(console.split(hint).length - 1, 1, console);
    const events = fs
      .readFileSync(path.join(out, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const retries = events.filter((e) => e.type === 'model_retry');
    // Reported at the first failed attempt of the run, before any call could be retried.
    assert.deepEqual(
      [retries[0].role, retries[0].kind, retries[0].total, retries[0].failures],
      ['target', 'network', 1, 1],
    );
    assert.match(retries[0].last_error, /ECONNREFUSED/);
    assert.equal(retries.filter((e) => e.hint).length, 1);
    // The server is down: the run stops, resumably, a few seconds later.
    const stopped = events.findIndex((e) => e.type === 'run_stopped' && e.reason === 'unreachable');
    assert.ok(stopped >= 0 && events.findIndex((e) => e.type === 'model_retry') < stopped);
  });
});
