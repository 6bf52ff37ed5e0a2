/**
 * Rollouts on worker processes through Redis. Three `skillopt worker` processes serve a training
 * whose `run.queue` names a throwaway Redis: with one of them killed (SIGKILL) in the middle of a
 * job, and with the trainer itself killed and resumed, the run writes the same `history.json` as
 * the same training in one process, and its ledger holds every rollout's calls once; the workers'
 * calls count against the run's budget.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { BIN, ROOT } from '../helpers/cli.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { SIM_CONFIG, historyOf, readText, trainSim, type SimRun } from '../helpers/train.ts';
import { loadConfig } from '../../src/config/load.ts';
import { runEvaluation } from '../../src/app/eval/evaluate.ts';
import { KEY_PREFIX, QUEUE_NAME } from '../../src/queue/jobs.ts';
import { queueRunId } from '../../src/queue/remote-env.ts';

// Small and quick; on the workers the target takes a while per call, so that a worker dies with jobs in hand.
const SMALL = ['train.num_epochs=1', 'env.n_train=40', 'env.n_val=20', 'env.n_test=20'];
const SLOW_TARGET = 'model.target.options.latency_ms=60';

function startWorker(url: string, name: string): { child: ChildProcess; ready: Promise<void> } {
  const child = spawn(
    process.execPath,
    [BIN, 'worker', '--redis', url, '--concurrency', '3', '--name', name, '--lock-seconds', '1'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
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

/** The rollout calls a run paid for, from its ledger. */
const paidRollouts = (out: string) =>
  readText(path.join(out, 'calls.jsonl'))
    .split('\n')
    .filter((l) => l.includes('"purpose":"rollout"') && l.includes('"from":"provider"')).length;

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await sleep(20);
  }
}

describe('rollouts on workers', () => {
  let redis: TestRedis;
  let queue: Queue;
  let local: SimRun;
  const workers: { child: ChildProcess; ready: Promise<void> }[] = [];

  before(async () => {
    redis = await startRedis();
    queue = new Queue(QUEUE_NAME, { connection: { url: redis.url }, prefix: KEY_PREFIX });
    // The workers start while the same training runs in this process.
    workers.push(...['w1', 'w2', 'w3'].map((name) => startWorker(redis.url, name)));
    local = await trainSim(SMALL);
    assert.equal(local.outcome.status, 'finished');
    await Promise.all(workers.map((w) => w.ready));
  });
  after(async () => {
    for (const { child } of workers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await queue.close();
    await redis.stop();
  });

  it('three workers, one killed mid-job, give the history of a run in one process', async () => {
    let killedWith: string[] = [];
    const killer = (async () => {
      await until(
        async () =>
          (killedWith = (await queue.getActive()).filter((j) => j.processedBy === 'w1').map((j) => j.id!)).length > 0,
        'w1 holds a job',
      );
      workers[0]!.child.kill('SIGKILL');
    })();
    const remote = await trainSim([...SMALL, `run.queue=${redis.url}`, SLOW_TARGET]);
    await killer;
    assert.equal(remote.outcome.status, 'finished');

    // Another worker took up each job the killed one held, once.
    for (const id of killedWith) {
      const job = await queue.getJob(id);
      assert.ok(job, `job ${id} is kept`);
      assert.equal(await job.getState(), 'completed', `job ${id} completed`);
      assert.notEqual(job.processedBy, 'w1', `job ${id} finished by another worker`);
      assert.equal(job.stalledCounter, 1, `job ${id} was taken up once after its worker died`);
    }
    assert.equal(readText(path.join(remote.out, 'history.json')), readText(path.join(local.out, 'history.json')));
    assert.equal(readText(path.join(remote.out, 'best_skill.md')), readText(path.join(local.out, 'best_skill.md')));
    // The workers' calls are in the run's ledger, each once, as the local run's are.
    assert.equal(paidRollouts(remote.out), paidRollouts(local.out));
  });

  it('skillopt eval runs its rollouts on the workers, with the same scores', async () => {
    const evaluate = (overrides: string[], outRoot: string) =>
      runEvaluation({
        loaded: loadConfig(SIM_CONFIG, { overrides: [...SMALL, ...overrides], environment: {} }),
        outRoot,
        configFile: SIM_CONFIG,
        skillFiles: [path.join(local.out, 'best_skill.md')],
        split: 'test',
        out: null,
        // The same figure measured twice, here and on the workers.
        rescoreTest: true,
      });
    const dir = tmpDir('skillopt-queue-eval-');
    const here = await evaluate([], path.join(dir, 'here'));
    const there = await evaluate([`run.queue=${redis.url}`], path.join(dir, 'there'));
    assert.deepEqual(
      there.cells.map((c) => [c.n_items, c.hard, c.soft, c.errors]),
      here.cells.map((c) => [c.n_items, c.hard, c.soft, c.errors]),
    );
    assert.equal(paidRollouts(path.join(dir, 'there')), here.cells[0]!.n_items);
    const run = queueRunId(path.join(dir, 'there'));
    assert.equal(
      (await queue.getCompleted(0, -1)).filter((j) => (j.data as { run: string }).run === run).length,
      here.cells[0]!.n_items,
      'each rollout was a job',
    );
  });

  it('a trainer killed mid-run resumes with the queue as it finds it', async () => {
    const out = path.join(tmpDir('skillopt-queue-'), 'run');
    const args = [
      'train',
      '--config',
      SIM_CONFIG,
      '--out',
      out,
      '--cfg-options',
      ...SMALL,
      `run.queue=${redis.url}`,
      SLOW_TARGET,
    ];
    const trainer = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: 'ignore' });
    const exited = new Promise((resolve) => trainer.once('exit', resolve));
    // Killed once its second step's rollouts are under way: jobs are waiting, running and done.
    await until(() => fs.existsSync(path.join(out, 'steps/step_0002')), 'the trainer reaches step 2');
    trainer.kill('SIGKILL');
    await exited;
    assert.ok(!fs.existsSync(path.join(out, 'summary.json')), 'the trainer was killed before the end');

    const resumed = await trainSim([...SMALL, `run.queue=${redis.url}`, SLOW_TARGET], out);
    assert.equal(resumed.outcome.status, 'finished');
    assert.equal(historyOf(out), historyOf(local.out));
    assert.equal(readText(path.join(out, 'best_skill.md')), readText(path.join(local.out, 'best_skill.md')));
    // No rollout was paid twice: the jobs the dead trainer left were taken as they were.
    assert.equal(paidRollouts(out), paidRollouts(local.out));
  });

  it("the workers' calls count against the run's budget", async () => {
    const maxCalls = 12;
    const run = await trainSim([...SMALL, `run.queue=${redis.url}`, `budget.max_calls=${maxCalls}`, 'env.workers=4']);
    assert.equal(run.outcome.status, 'stopped');
    assert.equal(run.outcome.status === 'stopped' && run.outcome.cause, 'budget');
    // Only rollouts had run when the limit was reached (the first step needs 40): what it overshoots
    // by is bounded by the jobs in flight; jobs no worker had taken were withdrawn.
    const paid = paidRollouts(run.out);
    assert.ok(paid > 0 && paid <= maxCalls + 4, `${paid} rollouts paid under max_calls=${maxCalls}`);
    assert.equal(readText(path.join(run.out, 'calls.jsonl')).trim().split('\n').length, paid, 'no other call was made');
  });
});
