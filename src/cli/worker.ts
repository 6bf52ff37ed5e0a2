import os from 'node:os';
import type { Command } from 'commander';
import { UserError } from '../errors.ts';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description(
      'Run rollouts for trainers whose run.queue names this Redis (on any machine with this project version and the data)',
    )
    .requiredOption('--redis <url>', 'the Redis URL the trainers use (run.queue), e.g. redis://10.0.0.5:6379')
    .option('--concurrency <n>', 'rollouts at once in this worker', String(Math.max(1, os.availableParallelism())))
    .option('--name <name>', 'this worker in the run records (default: host:pid)')
    .option('--lock-seconds <s>', 'how long a job of a worker that died waits before another worker takes it', '30')
    .action(async (opts: { redis: string; concurrency: string; name?: string; lockSeconds: string }) => {
      const concurrency = Number(opts.concurrency);
      if (!Number.isInteger(concurrency) || concurrency < 1)
        throw new UserError(`--concurrency must be a positive integer, not ${JSON.stringify(opts.concurrency)}`);
      const lockSeconds = Number(opts.lockSeconds);
      if (!(lockSeconds > 0))
        throw new UserError(`--lock-seconds must be a positive number, not ${JSON.stringify(opts.lockSeconds)}`);
      const [{ loadEnvironment }, { RolloutWorker }] = await Promise.all([
        import('../config/load.ts'),
        import('../queue/worker.ts'),
      ]);
      const environment = loadEnvironment();
      const say = (line: string) => process.stdout.write(`${line}\n`);
      const worker = new RolloutWorker({
        url: opts.redis,
        concurrency,
        name: opts.name,
        lockMs: lockSeconds * 1000,
        environment,
        log: say,
      });
      await worker.start();
      say(
        `skillopt worker: taking rollout jobs from ${opts.redis.replace(/\/\/[^@/]*@/, '//***@')} (${concurrency} at once); Ctrl-C stops after the rollouts in flight`,
      );
      await new Promise<void>((resolve) => {
        const stop = () => {
          say('skillopt worker: stopping after the rollouts in flight');
          void worker.close().then(resolve, resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
