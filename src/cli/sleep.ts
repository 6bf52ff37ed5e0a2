/** `skillopt sleep …`: learn from the user's own agent sessions, and change nothing without consent. */
import { Option, type Command } from 'commander';
import { collect } from './common.ts';
import { registerSleepInstall } from './sleep-install.ts';
import { runDryRun, runHarvest, runMine } from './sleep-learn.ts';
import { runAdopt, runHistory, runRollback, runRun, runStatus } from './sleep-night.ts';
import { configOption, harvestOptions, modelOptions, wholeNumber } from './sleep-options.ts';
import { registerSleepSchedule } from './sleep-schedule.ts';

export function registerSleep(program: Command): void {
  const sleep = program
    .command('sleep')
    .description(
      'Learn from your own agent sessions overnight: harvest, mine, replay, consolidate and stage skill edits; nothing live changes until you adopt them',
    );
  modelOptions(
    sleep
      .command('dry-run')
      .description(
        'Show what a night would harvest, the tasks it would learn from and what it would cost; calls no model, writes nothing',
      ),
  ).action(runDryRun);
  modelOptions(
    sleep
      .command('run')
      .description(
        'Run one night: harvest, mine, replay, consolidate, gate, and stage the proposals (nothing live changes)',
      ),
  )
    .option('--tasks <file>', 'train on a reviewed tasks file (from `skillopt sleep mine`) instead of harvesting')
    .option(
      '--force-unlock',
      'take over the lock of a night whose process cannot be checked (another host or container) when you know it is gone',
    )
    .action(runRun);
  harvestOptions(
    sleep
      .command('harvest')
      .description("Read your agents' sessions (read-only) and write their redacted digests to a harvest file"),
  )
    .option(
      '-o, --out <file>',
      'where to write the digests (JSON Lines; default: ~/.skillopt-sleep/harvests/<time>.jsonl)',
    )
    .action(runHarvest);
  registerSleepSchedule(sleep);
  registerSleepInstall(sleep);
  modelOptions(
    sleep
      .command('mine')
      .description(
        'Harvest and mine the tasks into a tasks file for you to review, edit and feed back with `run --tasks`',
      ),
  )
    .option('-o, --out <file>', 'where to write the tasks (default: ~/.skillopt-sleep/tasks/<time>.json)')
    .action(runMine);
  configOption(sleep.command('status').description('The last nights, what waits for adoption, what was adopted'))
    .option('--project <dir>', 'the project (default: the git root of the working directory)', collect)
    .action(runStatus);
  configOption(
    sleep.command('adopt').description("Apply a staged night's proposals to your files (backed up, all or nothing)"),
  )
    .option(
      '--night <dir>',
      'the night (its folder, or its name under ~/.skillopt-sleep/nights; default: the latest staged for the project)',
    )
    .option('--skill <name>', 'adopt only this document (repeatable; default: every staged one)', collect)
    .option(
      '--project <dir>',
      'the project whose latest night to adopt (default: the git root of the working directory)',
      collect,
    )
    .option(
      '--force-unlock',
      'take over the adoption lock of a process that cannot be checked when you know it is gone',
    )
    .action(runAdopt);
  configOption(
    sleep.command('rollback').description('Put the files of the latest adoption back as they were, byte for byte'),
  )
    .option('--night <dir>', 'roll back the latest adoption of this night (default: the latest adoption of all)')
    .option(
      '--force-unlock',
      'take over the adoption lock of a process that cannot be checked when you know it is gone',
    )
    .action(runRollback);
  configOption(sleep.command('history').description('Every night so far'))
    .addOption(new Option('--limit <n>', 'the last N nights').argParser(wholeNumber('--limit')))
    .action(runHistory);
}
