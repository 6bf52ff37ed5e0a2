/**
 * What a worker takes from Redis, where anyone who can write to it can put a run spec and jobs:
 * a spec that carries a config (a custom scorer module, an endpoint and a key variable), names a
 * config file outside the worker's project, or sets anything but a plain setting is refused, and
 * the module is never imported, the endpoint never called. A spec the trainer builds still runs.
 * A Redis URL without a password is refused unless it is on loopback or `--insecure` is given.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config/load.ts';
import { UserError } from '../../src/errors.ts';
import { KEY_PREFIX, QUEUE_NAME, runSpecKey, skillKey } from '../../src/queue/jobs.ts';
import { runSpecOf } from '../../src/queue/run-spec.ts';
import { RolloutWorker } from '../../src/queue/worker.ts';
import { skillHash } from '../../src/skill/document.ts';
import { VERSION } from '../../src/version.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

const SECRET = 'sk-worker-secret-value-0123456789';
const SKILL = 'Answer briefly.';

describe('a worker trusts its own checkout, not the run spec', () => {
  let redis: TestRedis;
  let fake: FakeProvider;
  let client: Redis;
  let queue: Queue;
  let events: QueueEvents;
  let worker: RolloutWorker;
  const project = fs.realpathSync(tmpDir('skillopt-worker-project-'));
  const outside = fs.realpathSync(tmpDir('skillopt-worker-outside-'));
  const marker = path.join(outside, 'scorer-was-imported');

  before(async () => {
    redis = await startRedis();
    fake = await startFakeProvider();
    fs.cpSync(path.join(ROOT, 'configs', '_base_'), path.join(project, 'configs', '_base_'), { recursive: true });
    fs.cpSync(path.join(ROOT, 'configs', 'sim'), path.join(project, 'configs', 'sim'), { recursive: true });
    writeFiles(outside, {
      'scorer.mjs': `import fs from 'node:fs';\nfs.writeFileSync(${JSON.stringify(marker)}, 'imported');\nexport default () => ({ hard: 1 });\n`,
      'data.jsonl': Array.from(
        { length: 10 },
        (_, i) => `{"id": "t${i}", "input": "${i}+${i}?", "answer": "${2 * i}"}\n`,
      ).join(''),
      'evil.yaml': `env:\n  name: tasks\n  data_path: ${path.join(outside, 'data.jsonl')}\n  scorer: {type: custom, module: ${path.join(outside, 'scorer.mjs')}}\n`,
    });
    client = new Redis(redis.url);
    queue = new Queue(QUEUE_NAME, { connection: { url: redis.url }, prefix: KEY_PREFIX });
    events = new QueueEvents(QUEUE_NAME, { connection: { url: redis.url }, prefix: KEY_PREFIX });
    await events.waitUntilReady();
    await client.set(skillKey(skillHash(SKILL)), SKILL);
    worker = new RolloutWorker({
      url: redis.url,
      concurrency: 1,
      name: 'w',
      project,
      environment: { ...process.env, ANY_VAR: SECRET },
    });
    await worker.start();
  });
  after(async () => {
    await worker?.close();
    await events?.close();
    await queue?.close();
    client?.disconnect();
    await fake?.close();
    await redis?.stop();
  });

  /** Publishes `spec` as run `run` and the outcome of one job of it. */
  async function jobOf(run: string, spec: unknown, item: string, target: string) {
    await client.set(runSpecKey(run), JSON.stringify(spec));
    const job = await queue.add('rollout', {
      run,
      skill: skillHash(SKILL),
      item,
      target,
      seed: 1,
      sample: 0,
      training: false,
    });
    return (await job.waitUntilFinished(events, 60_000)) as {
      trajectory?: { id: string };
      error?: { message: string };
    };
  }

  it('imports no scorer module the spec names', async () => {
    const carried = {
      version: VERSION,
      config: {
        env: {
          name: 'tasks',
          data_path: path.join(outside, 'data.jsonl'),
          scorer: { type: 'custom', module: path.join(outside, 'scorer.mjs') },
        },
        model: { target: { backend: 'sim', model: 'sim-1' }, optimizer: { backend: 'sim', model: 'sim-1' } },
      },
      baseDirs: {},
      defaultDir: outside,
      configFile: path.join(outside, 'evil.yaml'),
    };
    const named = {
      version: VERSION,
      config: path.relative(project, path.join(outside, 'evil.yaml')),
      settings: {},
      pinned: {},
    };
    const set = {
      version: VERSION,
      config: 'configs/sim/default.yaml',
      settings: { 'env.name': 'tasks', 'env.scorer.module': path.join(outside, 'scorer.mjs') },
      pinned: {},
    };
    for (const [run, spec, why] of [
      ['carried', carried, /a config file|expected string/],
      ['named', named, /must lie inside the project/],
      ['set', set, /sets env\.scorer\.module, which a worker takes only from its own config/],
    ] as const) {
      const outcome = await jobOf(run, spec, 't0', 'sim:sim-1');
      assert.equal(fs.existsSync(marker), false, `${run}: the module was never imported`);
      assert.match(outcome.error?.message ?? '', why, `${run}: ${JSON.stringify(outcome)}`);
    }
  });

  it("sends no request to an endpoint the spec names, and so no key of the worker's", async () => {
    const target = {
      backend: 'openai_compatible',
      model: 'probe',
      base_url: `${fake.url}/v1`,
      api_key_env: 'ANY_VAR',
    };
    const carried = {
      version: VERSION,
      config: { env: { name: 'sim', n_train: 4, n_val: 2, n_test: 2 }, model: { backend: 'sim', target } },
      baseDirs: {},
      defaultDir: project,
      configFile: path.join(project, 'configs/sim/default.yaml'),
    };
    const set = {
      version: VERSION,
      config: 'configs/sim/default.yaml',
      settings: { 'model.target.base_url': target.base_url, 'model.target.api_key_env': 'ANY_VAR' },
      pinned: {},
    };
    const a = await jobOf('endpoint-carried', carried, 'train-0000', 'openai_compatible:probe');
    const b = await jobOf('endpoint-set', set, 'train-0000', 'openai_compatible:probe');
    assert.ok(a.error, JSON.stringify(a));
    assert.match(b.error?.message ?? '', /sets model\.target\.base_url, which a worker takes only from its own config/);
    assert.equal(fake.requests.length, 0, 'nothing was sent to the endpoint of the spec');
  });

  it('runs a spec the trainer builds from the same config, its settings applied', async () => {
    const loaded = loadConfig(path.join(project, 'configs/sim/default.yaml'), {
      overrides: ['env.n_train=5', 'env.n_val=2', 'env.n_test=2'],
      environment: {},
    });
    const spec = { version: VERSION, ...runSpecOf(loaded, project) };
    assert.equal(spec.config, 'configs/sim/default.yaml');
    assert.equal(spec.settings['env.n_train'], 5);
    assert.equal(spec.settings['model.target.base_url'], undefined, 'endpoints are not carried');
    const outcome = await jobOf('trainer', spec, 'train-0004', 'sim:sim-1');
    assert.equal(outcome.trajectory?.id, 'train-0004', JSON.stringify(outcome));
    // The worker's copy gives another data set than the trainer's: refused, naming the key.
    const other = { ...spec, pinned: { ...spec.pinned, 'env.data_path': 'another' } };
    const refused = await jobOf('other-copy', other, 'train-0000', 'sim:sim-1');
    assert.match(refused.error?.message ?? '', /differs from the trainer's in env\.data_path/);
  });
});

describe('the Redis a worker takes jobs from', () => {
  it('needs a password unless it is on loopback or --insecure is given', () => {
    assert.throws(
      () => new RolloutWorker({ url: 'redis://redis.invalid:6379', concurrency: 1 }),
      (err) => err instanceof UserError && /has no password/.test(err.message),
    );
    const r = runCli(['worker', '--redis', 'redis://redis.invalid:6379'], { timeoutMs: 60_000 });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /redis:\/\/redis\.invalid:6379 has no password.*--insecure/s);
    const insecure = runCli(['worker', '--redis', 'redis://redis.invalid:6379', '--insecure'], { timeoutMs: 60_000 });
    assert.match(insecure.stderr, /cannot use Redis at redis:\/\/redis\.invalid:6379/, 'with --insecure it tries');
  });
});
