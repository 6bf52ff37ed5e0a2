/**
 * Rollouts on worker processes through Redis: a training whose `run.queue` names a Redis, run by
 * three `skillopt worker` processes of which one is killed (SIGKILL) in the middle of a job,
 * writes the same `history.json` as the same training in one process, and its ledger holds every
 * rollout's calls once.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { BIN } from '../helpers/cli.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { readText, trainSim } from '../helpers/train.ts';
import { KEY_PREFIX, QUEUE_NAME } from '../../src/queue/jobs.ts';

// Small and quick; the target takes a while per call so that a worker dies with jobs in hand.
const SMALL = ['train.num_epochs=1', 'env.n_train=40', 'env.n_val=20', 'env.n_test=20'];

function startWorker(url: string, name: string): { child: ChildProcess; ready: Promise<void> } {
  const child = spawn(process.execPath, [BIN, 'worker', '--redis', url, '--concurrency', '3', '--name', name, '--lock-seconds', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('taking rollout jobs')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker ${name} exited (${code}): ${out}`)));
  });
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return { child, ready };
}

const rolloutCalls = (out: string) => readText(path.join(out, 'calls.jsonl')).split('\n').filter((l) => l.includes('"purpose":"rollout"')).length;

describe('rollouts on workers', () => {
  let redis: TestRedis;
  const workers: ChildProcess[] = [];

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
    await redis.stop();
  });

  it('three workers, one killed mid-job, give the history of a run in one process', async () => {
    // The workers start while the same training runs in this process.
    const started = ['w1', 'w2', 'w3'].map((name) => startWorker(redis.url, name));
    workers.push(...started.map((s) => s.child));
    const local = await trainSim(SMALL);
    assert.equal(local.outcome.status, 'finished');
    await Promise.all(started.map((s) => s.ready));

    // Kill w1 (SIGKILL: no goodbye) as soon as it holds a job.
    const queue = new Queue(QUEUE_NAME, { connection: { url: redis.url }, prefix: KEY_PREFIX });
    let killedWith: string[] = [];
    const killer = (async () => {
      for (;;) {
        const held = (await queue.getActive()).filter((j) => j.processedBy === 'w1');
        if (held.length) {
          started[0]!.child.kill('SIGKILL');
          killedWith = held.map((j) => j.id!);
          return;
        }
        await sleep(20);
      }
    })();
    const remote = await trainSim([...SMALL, `run.queue=${redis.url}`, 'model.target.options.latency_ms=60']);
    await killer;
    assert.equal(remote.outcome.status, 'finished');
    assert.ok(killedWith.length > 0, 'w1 was killed holding a job');

    // Another worker took up each job the killed one held.
    for (const id of killedWith) {
      const job = await queue.getJob(id);
      assert.ok(job, `job ${id} is kept`);
      assert.equal(await job.getState(), 'completed', `job ${id} completed`);
      assert.notEqual(job.processedBy, 'w1', `job ${id} finished by another worker`);
      assert.equal(job.stalledCounter, 1, `job ${id} was taken up once after its worker died`);
    }
    await queue.close();

    assert.equal(readText(path.join(remote.out, 'history.json')), readText(path.join(local.out, 'history.json')));
    assert.equal(readText(path.join(remote.out, 'best_skill.md')), readText(path.join(local.out, 'best_skill.md')));
    // The workers' calls are in the run's ledger, each once, as the local run's.
    assert.equal(rolloutCalls(remote.out), rolloutCalls(local.out));
    assert.ok(fs.existsSync(path.join(remote.out, 'summary.json')));
  });
});
