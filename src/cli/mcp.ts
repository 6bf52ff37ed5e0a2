/** `skillopt mcp`: the MCP server on stdio, for agents (Claude Code, Codex, Copilot, Cursor). */
import type { Command } from 'commander';

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description(
      "Serve skillopt's tools to an agent over MCP (stdio): Sleep's status, dry run, harvest, night, adopt, rollback, history, schedule; train, run progress, eval",
    )
    .option(
      '--project <dir>',
      'the project the tools work in; paths outside it are refused (default: the working directory)',
    )
    .option(
      '--config <file>',
      'the Sleep config file (default: ~/.config/skillopt/sleep.yaml, or $SKILLOPT_SLEEP_CONFIG)',
    )
    .action(async (opts: { project?: string; config?: string }) => {
      const { createMcpServer } = await import('../mcp/server.ts');
      const { LineTransport } = await import('../mcp/stdio-transport.ts');
      const server = createMcpServer({ project: opts.project ?? process.cwd(), sleepConfig: opts.config });
      const transport = new LineTransport();
      await server.connect(transport);
      // Serve until the client closes stdin.
      await new Promise<void>((resolve) => {
        server.server.onclose = () => resolve();
        process.stdin.once('end', () => resolve());
      });
      await server.close();
    });
}
