import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { LoadedConfig } from '../config/load.ts';
import { CommandExit, Interrupted, UserError } from '../errors.ts';
import { programName } from '../run/resume-command.ts';
import { defaultOutRoot, RUNS_ROOT } from '../run/runs-root.ts';
import { ACCEPT_UNREVIEWED, addConfigOptions, originalFlagsOf, withUnreviewed, type ConfigOptions } from './common.ts';
import { withStopSignal } from './stop-signal.ts';

interface TrainOptions extends ConfigOptions {
  out?: string;
  resume?: string | true;
  verbose?: boolean;
  forceUnlock?: boolean;
  dryRun?: boolean;
}

function holdsRun(dir: string, flag: string): string {
  if (!fs.existsSync(path.join(dir, 'config.json')))
    throw new UserError(`${flag}: there is no run in ${dir} (no config.json)`);
  return dir;
}

/**
 * The run directory: `--resume DIR`; `--resume` alone, the latest unfinished run of this config
 * under the runs root (one whose training settings match, if any does); else `--out`,
 * `env.out_root`, or a new timestamped directory under the runs root.
 */
async function runDirectory(opts: TrainOptions, loaded: LoadedConfig): Promise<string> {
  const fixed = opts.out || loaded.config.env.out_root;
  if (typeof opts.resume === 'string') {
    const dir = path.resolve(opts.resume);
    if (opts.out && path.resolve(opts.out) !== dir)
      throw new UserError(`--out ${opts.out} and --resume ${opts.resume} name different directories: give one of them`);
    return holdsRun(dir, '--resume');
  }
  if (!opts.resume) return path.resolve(fixed || defaultOutRoot(loaded.config.env.name));
  if (fixed) return holdsRun(path.resolve(fixed), '--resume');
  const [{ trainingChanges }, { runsOfConfig }] = await Promise.all([
    import('../app/resume-check.ts'),
    import('../run/find-run.ts'),
  ]);
  const root = path.resolve(RUNS_ROOT);
  const runs = runsOfConfig(root, loaded.files.at(-1)!);
  const unfinished = runs.filter((r) => !r.finished);
  const chosen =
    unfinished.find((r) => trainingChanges(r.config, loaded.config, loaded.secretPaths).length === 0) ?? unfinished[0];
  if (!chosen) {
    const latest = runs[0] ? `; the latest, ${runs[0].dir}, is finished` : '';
    throw new UserError(
      `--resume: no unfinished run of ${opts.config} under ${root}${latest}. Leave out --resume to start a new run`,
    );
  }
  return chosen.dir;
}

export function registerTrain(program: Command): void {
  addConfigOptions(
    program
      .command('train')
      .description(
        'Train a skill: rollouts, reflection, merged and ranked edits, a validation gate, epoch-end slow update and meta skill',
      )
      .option(
        '-o, --out <dir>',
        `run directory (default: env.out_root, else ${RUNS_ROOT}/<env>/<timestamp>); a run already there is resumed`,
      )
      .option(
        '--resume [dir]',
        `continue an unfinished run: the one in <dir>, else the latest of this config under ${RUNS_ROOT}/`,
      )
      .option(
        '--force-unlock',
        'take over the run lock of a process that cannot be checked from here (another host or container) when you know it is gone',
      )
      .option(
        '-v, --verbose',
        "print the full resolved config before training, and on the console the records' codes (gate[hard], batch_seed, action names) beside their words",
      )
      .option(...ACCEPT_UNREVIEWED)
      .option(
        '--dry-run',
        'print the planned model calls per stage with estimated tokens and cost, then stop (calls nothing, spends nothing)',
      ),
  ).action(async (opts: TrainOptions) => {
    withUnreviewed(opts);
    const { loadFromOptions, renderConfig } = await import('./load-config.ts');
    const loaded = loadFromOptions(opts);
    if (opts.dryRun) {
      const [{ planRun, formatPlan }, { planInputFor }, { unpricedBudgetNote }] = await Promise.all([
        import('../app/plan.ts'),
        import('../app/plan-input.ts'),
        import('../app/useless-run.ts'),
      ]);
      const plan = planRun(await planInputFor(loaded));
      process.stdout.write(`${formatPlan(plan)}\n`);
      const note = unpricedBudgetNote(loaded.config, plan);
      if (note) process.stderr.write(`warning: ${note}\n`);
      return;
    }
    const outRoot = await runDirectory(opts, loaded);
    const { runTraining } = await import('../app/train.ts');
    const outcome = await withStopSignal(
      (signal) =>
        runTraining({
          loaded,
          outRoot,
          configFile: opts.config,
          signal,
          forceUnlock: opts.forceUnlock,
          verbose: opts.verbose,
          // The original's flat flags are applied after --cfg-options, as `flag=value` items: the resume repeats them so.
          invocation: {
            program: programName(),
            config: opts.config,
            overrides: [
              ...(opts.cfgOptions ?? []),
              ...(opts.set ?? []),
              ...originalFlagsOf(opts)
                .filter(([flag]) => flag !== 'out_root')
                .map(([flag, value]) => `${flag}=${value}`),
            ],
          },
          onStart: opts.verbose
            ? () => process.stdout.write(`resolved config (${loaded.files.join(' <- ')}):\n${renderConfig(loaded)}\n`)
            : undefined,
        }),
      'the run resumes from its last complete step',
    );
    if (outcome.status === 'stopped' && outcome.cause === 'interrupted') {
      // A run that was saved has said how to resume it.
      throw new Interrupted(outcome.resumeCommand ? '' : `${outcome.reason}: nothing to resume`);
    }
    if (outcome.status === 'stopped' || !outcome.alreadyFinished) process.stdout.write(`Output saved to: ${outRoot}\n`);
    // A server that is down is a failure to fix before the resume, not a limit reached.
    if (outcome.status === 'stopped' && outcome.cause === 'unreachable') throw new CommandExit(1);
  });
}
