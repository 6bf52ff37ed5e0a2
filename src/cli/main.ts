/** The `skillopt` command line. Exit codes: 0 ok, 1 the run failed, 2 bad usage or bad input, 130 stopped by Ctrl-C. */
import { Command, CommanderError } from 'commander';
import { redactText } from '../config/redact.ts';
import { CommandExit, Interrupted, UserError, errorMessage } from '../errors.ts';
import { FatalModelError, ModelConfigError } from '../model/types.ts';
import { VERSION } from '../version.ts';
import { registerTrain } from './train.ts';
import { registerEval } from './eval.ts';
import { registerUi } from './ui.ts';
import { registerData } from './data.ts';
import { registerSleep } from './sleep.ts';
import { registerMcp } from './mcp.ts';
import { registerDeploy } from './deploy.ts';
import { registerWorker } from './worker.ts';
import { registerExport } from './export.ts';
import { registerAudit } from './audit.ts';
import { registerTasks } from './tasks.ts';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export function buildProgram(): Command {
  const program = new Command('skillopt')
    .description('Train an agent skill document like a neural network, without touching model weights.')
    .version(VERSION, '-V, --version')
    .showHelpAfterError()
    .exitOverride()
    // The built-in envs, backends and materializers, loaded only when a command runs (not for --help or --version).
    .hook('preAction', async () => {
      await import('../builtins.ts');
    });
  registerTrain(program);
  registerEval(program);
  registerUi(program);
  registerData(program);
  registerSleep(program);
  registerMcp(program);
  registerDeploy(program);
  registerWorker(program);
  registerExport(program);
  registerAudit(program);
  registerTasks(program);
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
        return EXIT_OK;
      return EXIT_USAGE;
    }
    // A provider's error may echo a key.
    const say = (text: string) => process.stderr.write(`${redactText(text)}\n`);
    if (err instanceof CommandExit) {
      if (err.message) say(`skillopt: ${err.message}`);
      return err.code;
    }
    if (err instanceof Interrupted) {
      if (err.message) say(`skillopt: ${err.message}`);
      return Interrupted.exitCode;
    }
    if (err instanceof UserError || err instanceof ModelConfigError) {
      say(`skillopt: ${err.message}`);
      return EXIT_USAGE;
    }
    if (err instanceof FatalModelError) {
      say(`skillopt: ${err.message}`);
      return EXIT_FAILED;
    }
    say(`skillopt: ${errorMessage(err)}`);
    if (process.env.SKILLOPT_DEBUG && err instanceof Error) say(`${err.stack}`);
    return EXIT_FAILED;
  }
}
