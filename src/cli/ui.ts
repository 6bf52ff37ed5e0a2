import type { Command } from 'commander';

export function registerUi(program: Command): void {
  program
    .command('ui')
    .description('Live dashboard of training runs (served on 127.0.0.1)')
    .option('--runs <dir...>', 'run roots to show', ['outputs'])
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <port>', 'port', '7860')
    .action(async (opts: { runs: string[]; host: string; port: string }) => {
      const { serveDashboard } = await import('../web/server.ts');
      await serveDashboard({ roots: opts.runs, host: opts.host, port: Number(opts.port) });
    });
}
