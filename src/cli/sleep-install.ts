/** `skillopt sleep install <agent>` / `uninstall <agent>`: the MCP server in an agent's configuration. */
import type { Command } from 'commander';
import { sleepStateDir } from './sleep-schedule.ts';

const CLAUDE = `Claude Code installs skillopt as a plugin, with its own commands:
  claude plugin marketplace add <the skillopt repository folder or its GitHub address>
  claude plugin install skillopt-sleep@skillopt
`;

export function registerSleepInstall(sleep: Command): void {
  sleep
    .command('install')
    .description(
      "Add skillopt's MCP server to an agent's configuration (codex also gets the skill), backing up what was there: codex, copilot (CLI), vscode (Copilot in VS Code), cursor; claude prints the plugin commands",
    )
    .argument('<agent>', 'codex, copilot, vscode, cursor or claude')
    .option('--config <file>', 'the Sleep config file (its state_dir keeps the record of what was installed)')
    .action(async (agent: string, opts: { config?: string }) => {
      if (agent === 'claude') return void process.stdout.write(CLAUDE);
      const { AGENTS } = await import('../sleep/install/agents.ts');
      const { UserError } = await import('../errors.ts');
      if (!(AGENTS as readonly string[]).includes(agent))
        throw new UserError(`unknown agent '${agent}': the agents are ${[...AGENTS, 'claude'].join(', ')}`);
      const { install } = await import('../sleep/install/install.ts');
      const { SKILLOPT_BIN } = await import('../web/actions/jobs.ts');
      const result = install(agent as never, await sleepStateDir(opts.config), {
        node: process.execPath,
        bin: SKILLOPT_BIN,
      });
      process.stdout.write(`${result.lines.join('\n')}\n`);
    });
  sleep
    .command('uninstall')
    .description(
      "Take skillopt out of an agent's configuration again, restoring the backup when the file is as install left it",
    )
    .argument('<agent>', 'codex, copilot, vscode or cursor')
    .option('--config <file>', 'the Sleep config file')
    .action(async (agent: string, opts: { config?: string }) => {
      const { AGENTS } = await import('../sleep/install/agents.ts');
      const { UserError } = await import('../errors.ts');
      if (!(AGENTS as readonly string[]).includes(agent))
        throw new UserError(`unknown agent '${agent}': the agents are ${AGENTS.join(', ')}`);
      const { uninstall } = await import('../sleep/install/install.ts');
      const lines = uninstall(agent as never, await sleepStateDir(opts.config));
      process.stdout.write(
        lines ? `${lines.join('\n')}\n` : `skillopt is not installed in ${agent} (no record of an install)\n`,
      );
    });
}
