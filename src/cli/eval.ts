import path from 'node:path';
import type { Command } from 'commander';
import { addConfigOptions, loadFromOptions, type ConfigOptions } from './common.ts';

export function registerEval(program: Command): void {
  addConfigOptions(
    program
      .command('eval')
      .description('Score a skill on a split and write eval_summary.json')
      .requiredOption('-s, --skill <file>', 'skill file to evaluate')
      .option('--split <name>', 'train, val or test (aliases: valid_seen, selection, valid_unseen)', 'test')
      .option('-o, --out <dir>', 'output directory (default: outputs/eval_<env>_<timestamp>)'),
  ).action(async (opts: ConfigOptions & { skill: string; split: string; out?: string }) => {
    const loaded = loadFromOptions(opts);
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '_').slice(0, 15);
    const outRoot = path.resolve(opts.out || path.join('outputs', `eval_${loaded.config.env.name || 'run'}_${stamp}`));
    const { runEvaluation } = await import('../engine/evaluate.ts');
    await runEvaluation({ loaded, outRoot, configFile: opts.config, skillFile: opts.skill, split: opts.split });
  });
}
