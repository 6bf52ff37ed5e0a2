import path from 'node:path';
import type { Command } from 'commander';
import { addConfigOptions, loadFromOptions, renderConfig, type ConfigOptions } from './common.ts';

export function defaultOutRoot(env: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '_').slice(0, 15);
  return path.join('outputs', env || 'run', stamp);
}

export function registerTrain(program: Command): void {
  addConfigOptions(
    program
      .command('train')
      .description('Train a skill: rollouts, reflection, merged and ranked edits, a validation gate, epoch-end slow update and meta skill')
      .option('-o, --out <dir>', 'run directory (default: env.out_root, else outputs/<env>/<timestamp>); an existing run there is resumed')
      .option('--force-unlock', 'take over the run lock of a process that cannot be checked from here (another host or container) when you know it is gone')
      .option('--dry-run', 'print the planned model calls per stage with estimated tokens and cost, then stop (calls nothing, spends nothing)'),
  ).action(async (opts: ConfigOptions & { out?: string; dryRun?: boolean; forceUnlock?: boolean }) => {
    const loaded = loadFromOptions(opts);
    if (opts.dryRun) {
      const { planInputFor, planRun, formatPlan } = await import('../engine/plan.ts');
      process.stdout.write(`${formatPlan(planRun(await planInputFor(loaded)))}\n`);
      return;
    }
    const outRoot = path.resolve(opts.out || loaded.config.env.out_root || defaultOutRoot(loaded.config.env.name));
    process.stdout.write(`resolved config (${loaded.files.join(' <- ')}):\n${renderConfig(loaded)}\n`);
    const { runTraining } = await import('../engine/run.ts');
    await runTraining({ loaded, outRoot, configFile: opts.config, forceUnlock: opts.forceUnlock });
    process.stdout.write(`Output saved to: ${outRoot}\n`);
  });
}
