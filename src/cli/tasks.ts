/** `skillopt tasks draft --triggers`: a trigger eval set drafted by the optimizer model, to review before use. */
import type { Command } from 'commander';
import { addConfigOptions, type ConfigOptions } from './common.ts';

interface DraftFlags extends ConfigOptions {
  triggers?: boolean;
  from: string;
  out: string;
  count: string;
  force?: boolean;
}

export function registerTasks(program: Command): void {
  const tasks = program
    .command('tasks')
    .description('Eval sets for a skill: draft them with the optimizer model, then review them');
  addConfigOptions(
    tasks
      .command('draft')
      .description(
        'Draft a trigger eval set (skill-creator\'s format) from a skill with the config\'s optimizer model; every query is marked "draft": true until a person reviews it',
      )
      .option('--triggers', 'draft should- and should-not-trigger queries (the only kind drafted so far)')
      .requiredOption(
        '--from <skill>',
        'the skill: a SKILL.md, a folder, a .skill archive or an installed skill (claude:NAME)',
      )
      .requiredOption('--out <file>', 'the JSON file to write')
      .option('-n, --count <n>', 'queries of each kind', '10')
      .option('--force', 'replace --out when it exists'),
  ).action(async (opts: DraftFlags) => {
    const { UserError } = await import('../errors.ts');
    if (!opts.triggers)
      throw new UserError('tasks draft: say what to draft: --triggers (trigger eval sets are the kind drafted so far)');
    const count = Number(opts.count);
    if (!Number.isInteger(count) || count < 1 || count > 100)
      throw new UserError(`--count: expected a whole number from 1 to 100, got ${opts.count}`);
    const { loadFromOptions } = await import('./load-config.ts');
    const { draftTriggerSet } = await import('../app/draft-triggers.ts');
    const r = await draftTriggerSet({
      config: loadFromOptions(opts).config,
      from: opts.from,
      out: opts.out,
      count,
      force: opts.force,
    });
    process.stdout.write(
      `wrote ${r.file}: ${r.should} should-trigger and ${r.shouldNot} should-not-trigger queries, all marked "draft": true.\n` +
        'Read each one, fix or delete it, and remove its mark: train and eval refuse drafts unless run with --accept-unreviewed.\n',
    );
  });
}
