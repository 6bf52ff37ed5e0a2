import type { Command } from 'commander';
import { UserError } from '../errors.ts';

export function registerUi(program: Command): void {
  program
    .command('ui')
    .description('Live dashboard of training runs (served on 127.0.0.1)')
    .option('--runs <dir...>', 'run roots to show (directories holding runs, or runs themselves)', ['outputs'])
    .option('--host <host>', 'address to bind (anything but loopback exposes the runs to the network)', '127.0.0.1')
    .option('--port <port>', 'port (0 picks a free one)', '7860')
    .option(
      '--allowed-host <name>',
      'a host name the page may be opened by, besides the bound address and localhost (repeatable; requests addressed to any other name are refused)',
      (name: string, all: string[]) => [...all, name],
      [] as string[],
    )
    .action(async (opts: { runs: string[]; host: string; port: string; allowedHost: string[] }) => {
      if (!/^\d{1,5}$/.test(opts.port)) throw new UserError(`--port must be a port number, not ${JSON.stringify(opts.port)}`);
      const { serveDashboard } = await import('../web/server.ts');
      await serveDashboard({ roots: opts.runs, host: opts.host, port: Number(opts.port), allowedHosts: opts.allowedHost });
    });
}
