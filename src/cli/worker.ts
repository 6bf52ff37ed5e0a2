/** `skillopt worker`: a rollout worker on Redis, for trainers whose `run.queue` names it. */
import os from 'node:os';
import type { Command } from 'commander';
import { UserError } from '../errors.ts';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description(
      'Run rollouts for trainers whose run.queue names this Redis (on any machine with this project version and the data)',
    )
    .option(
      '--redis <url>',
      'the Redis URL the trainers use (run.queue), e.g. redis://:PASSWORD@10.0.0.5:6379 (default: $SKILLOPT_REDIS_URL, which keeps the password off the command line)',
    )
    .option('--insecure', 'take a Redis without a password on another machine (only on a network no one else uses)')
    .option('--concurrency <n>', 'rollouts at once in this worker', String(Math.max(1, os.availableParallelism())))
    .option('--name <name>', 'this worker in the run records (default: host:pid)')
    .option('--lock-seconds <s>', 'how long a job of a worker that died waits before another worker takes it', '30')
    .action(
      async (opts: { redis?: string; insecure?: boolean; concurrency: string; name?: string; lockSeconds: string }) => {
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
        const url = opts.redis ?? environment.SKILLOPT_REDIS_URL;
        if (!url) throw new UserError('--redis: give the Redis URL the trainers use (or set SKILLOPT_REDIS_URL)');
        const say = (line: string) => process.stdout.write(`${line}\n`);
        const worker = new RolloutWorker({
          url,
          insecure: opts.insecure,
          concurrency,
          name: opts.name,
          lockMs: lockSeconds * 1000,
          environment,
          log: say,
        });
        await worker.start();
        say(
          `skillopt worker: taking rollout jobs from ${url.replace(/\/\/[^@/]*@/, '//***@')} (${concurrency} at once); Ctrl-C stops after the rollouts in flight`,
        );
        await new Promise<void>((resolve) => {
          const stop = () => {
            say('skillopt worker: stopping after the rollouts in flight');
            void worker.close().then(resolve, resolve);
          };
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
      },
    );
}
