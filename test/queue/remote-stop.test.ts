/**
 * A stop while rollout jobs are still being added: the trainer withdraws the jobs no worker has
 * taken, and each rollout ends with the stop, without an unhandled rejection (which would end a
 * CLI process with a crash instead of "the run is saved").
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { Admission } from '../../src/model/admission.ts';
import { Ledger } from '../../src/model/ledger.ts';
import { RunStop, type ChatModel } from '../../src/model/types.ts';
import { RemoteRollouts } from '../../src/queue/remote-env.ts';

describe('a stop while rollout jobs are being added', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  before(async () => (redis = await startRedis()));
  after(async () => redis.stop());

  it('withdraws them, and each rollout ends with the stop, none unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const admission = new Admission();
    const remote = new RemoteRollouts({
      url: redis.url,
      runRoot: tmpDir('skillopt-remote-stop-'),
      spec: { config: 'config.yaml', settings: {}, pinned: {} },
      ledger: new Ledger(),
      admission,
    });
    try {
      await remote.connect();
      // Each add answers late, as a busy Redis would: the stop comes while the jobs are in Redis but their adds not yet answered.
      const queue = (remote as unknown as { queue: { add: (...args: unknown[]) => Promise<unknown> } }).queue;
      const add = queue.add.bind(queue);
      queue.add = async (...args) => {
        const job = await add(...args);
        await sleep(100);
        return job;
      };
      const target = { id: 'sim:target' } as ChatModel;
      const rollouts = Array.from({ length: 4 }, (_, i) =>
        remote.rollout({ id: `item-${i}`, question: 'q', answer: 'a' } as never, 'the skill', {
          target,
          seed: 1,
        } as never),
      );
      const waiting = (remote as unknown as { waiting: Map<string, unknown> }).waiting;
      while (waiting.size < 4) await sleep(5);
      await sleep(30);
      admission.halt(new RunStop('budget reached (test)', 'budget'));
      const ends = await Promise.allSettled(rollouts);
      await sleep(50);
      assert.deepEqual(
        ends.map((e) => e.status === 'rejected' && e.reason instanceof RunStop),
        [true, true, true, true],
      );
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await remote.close();
    }
  });
});
