import path from 'node:path';
import type { Command } from 'commander';
import { evalResumeCommand, programName } from '../run/resume-command.ts';
import { defaultEvalDir, RUNS_ROOT } from '../run/runs-root.ts';
import {
  ACCEPT_UNREVIEWED,
  addConfigOptions,
  collect,
  originalFlagsOf,
  withUnreviewed,
  type ConfigOptions,
} from './common.ts';
import { withStopSignal } from './stop-signal.ts';

interface EvalFlags extends ConfigOptions {
  skill: string[];
  split?: string;
  target?: string[];
  repeats?: string;
  triggers?: string;
  out?: string;
  out_root?: string;
  forceUnlock?: boolean;
  rescoreTest?: boolean;
}

export function registerEval(program: Command): void {
  addConfigOptions(
    program
      .command('eval')
      .description(
        'Score skills on a split, on one or several target models, and write eval_summary.json and eval_summary.md',
      )
      .requiredOption(
        '-s, --skill <file>',
        'skill file to evaluate; repeat to compare skills (each is tested against the first on the same items); `none`: no skill, the baseline of what a skill gains and costs',
        collect,
      )
      .option(
        '--split <name>',
        'train, val, test or all (aliases: valid_seen, selection, valid_unseen); default: test, all with --triggers',
      )
      .option(
        '--triggers <file>',
        "measure when the skill loads: a trigger eval set (skill-creator's JSON, or JSONL/CSV with query and should_trigger), run with the triggers env",
      )
      .option(
        '-t, --target <backend:model>',
        "target model, e.g. openai_compatible:qwen3-8b; repeat for a transfer check (default: the config's model.target)",
        collect,
      )
      .option(
        '-r, --repeats <n>',
        'run every item this many times (distinct samples); item scores are averaged; default: 1, 3 with --triggers',
      )
      .option('-o, --out <dir>', `output directory (default: ${RUNS_ROOT}/eval_<env>_<target model>_<timestamp>)`)
      .option(...ACCEPT_UNREVIEWED)
      .option(
        '--rescore-test',
        'score the test split again for a skill and target whose test figure another run sealed (the seal records it; without it the sealed figure is shown)',
      )
      .option(
        '--force-unlock',
        "take over the output directory's lock from a process that cannot be checked from here (another host or container) when you know it is gone",
      ),
  ).action(async (opts: EvalFlags) => {
    withUnreviewed(opts);
    if (opts.triggers) {
      // The same as naming the env and its data: so the command that continues it says the same.
      opts.set = [...(opts.set ?? []), 'env.name=triggers', `env.data_path=${path.resolve(opts.triggers)}`];
      opts.split ??= 'all';
      opts.repeats ??= '3';
    }
    opts.split ??= 'test';
    opts.repeats ??= '1';
    const { loadFromOptions } = await import('./load-config.ts');
    const loaded = loadFromOptions(opts);
    const model = opts.target?.[0]?.split(':').slice(1).join(':') || loaded.config.model.target.model;
    // The original's --out_root names the output directory of eval_only.py too.
    const outRoot = path.resolve(opts.out || opts.out_root || defaultEvalDir(loaded.config.env.name, model));
    const repeats = Number(opts.repeats);
    const split = opts.split;
    // The original's flat flags are applied after --cfg-options, as `flag=value` items: the command that continues repeats them so.
    const overrides = [
      ...(opts.cfgOptions ?? []),
      ...(opts.set ?? []),
      ...originalFlagsOf(opts)
        .filter(([flag]) => flag !== 'out_root')
        .map(([flag, value]) => `${flag}=${value}`),
    ];
    const resumeCommand = evalResumeCommand(
      {
        program: programName(),
        config: opts.config,
        overrides,
        skills: opts.skill,
        split,
        targets: opts.target ?? [],
        repeats,
      },
      outRoot,
    );
    const { runEvaluation } = await import('../app/eval/evaluate.ts');
    await withStopSignal(
      (signal) =>
        runEvaluation({
          loaded,
          outRoot,
          configFile: opts.config,
          skillFiles: opts.skill,
          split,
          targets: opts.target,
          repeats,
          signal,
          resumeCommand,
          forceUnlock: opts.forceUnlock,
          rescoreTest: opts.rescoreTest,
        }),
      `the rollouts finished so far are kept in ${outRoot}`,
    );
  });
}
