import fs from 'node:fs';
import type { Command } from 'commander';
import { UserError } from '../errors.ts';
import { RUNS_ROOT } from '../run/runs-root.ts';

const repeatable = (value: string, all: string[]) => [...all, value];

/** The state folder `skillopt sleep status` reads; undefined (with a warning) when the Sleep config does not load. */
async function defaultSleepState(): Promise<string | undefined> {
  const { sleepStateDir } = await import('./sleep-schedule.ts');
  try {
    return await sleepStateDir();
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    process.stderr.write(`warning: Sleep nights are not shown: ${err.message}\n`);
    return undefined;
  }
}

export function registerUi(program: Command): void {
  program
    .command('ui')
    .description('Live dashboard of training runs (served on 127.0.0.1): watch, launch, stop, resume and evaluate runs')
    .option(
      '--runs <dir...>',
      'run roots to show (directories holding runs, or runs themselves); runs launched from the page go under the first',
      [RUNS_ROOT],
    )
    .option(
      '--configs <dir>',
      'a directory the page may take configs from, besides configs/ here and the shipped ones (repeatable)',
      repeatable,
      [] as string[],
    )
    .option(
      '--host <host>',
      'address to bind (anything but loopback exposes the runs to the network, and turns actions off unless --allow-actions)',
      '127.0.0.1',
    )
    .option('--port <port>', 'port (0 picks a free one)', '7860')
    .option(
      '--allowed-host <name>',
      'a host name the page may be opened by, besides the bound address and localhost (repeatable; requests addressed to any other name are refused)',
      repeatable,
      [] as string[],
    )
    .option(
      '--sleep-state <dir>',
      "the Sleep state folder whose nights show beside the runs (default: the Sleep config's state_dir, as `skillopt sleep status` reads it)",
    )
    .option(
      '--allow-actions',
      'on an address other than loopback: allow launching, stopping, resuming and evaluating runs to whoever has the token printed at start',
    )
    .action(
      async (opts: {
        runs: string[];
        configs: string[];
        host: string;
        port: string;
        allowedHost: string[];
        allowActions?: boolean;
        sleepState?: string;
      }) => {
        if (!/^\d{1,5}$/.test(opts.port))
          throw new UserError(`--port must be a port number, not ${JSON.stringify(opts.port)}`);
        for (const dir of opts.configs)
          if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory())
            throw new UserError(`--configs ${dir}: no such directory`);
        const [{ serveDashboard }, { defaultConfigRoots }] = await Promise.all([
          import('../web/server/server.ts'),
          import('../web/actions/config-roots.ts'),
        ]);
        await serveDashboard({
          sleepStateDir: opts.sleepState ?? (await defaultSleepState()),
          roots: opts.runs,
          host: opts.host,
          port: Number(opts.port),
          allowedHosts: opts.allowedHost,
          configRoots: [...defaultConfigRoots(), ...opts.configs],
          allowActions: opts.allowActions,
        });
      },
    );
}
