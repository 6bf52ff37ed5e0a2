/** `skillopt audit`: what a skill carries of the data and of its scorer, and its sealed test figure. */
import type { Command } from 'commander';
import { type ConfigOptions, collect, originalFlagsOf } from './common.ts';

interface AuditFlags extends Partial<ConfigOptions> {
  against?: string;
  json?: boolean;
}

export function registerAudit(program: Command): void {
  program
    .command('audit')
    .description(
      "Audit a run's best skill, or any skill, over a config's data: items it carries (answers, ids, copied requests), text that mirrors the scorer, and the test figure sealed for it. Makes no model call; exits 1 when the audit rejects",
    )
    .argument('<run-or-skill>', 'a run directory (its best skill against its initial one), or a skill file or folder')
    .option(
      '-c, --config <file>',
      'the config whose data and scorer to audit against (default for a run: the config it was started with)',
    )
    .option('--against <skill>', 'hold only what the skill adds over this one against it')
    .option('--json', 'print the report as JSON')
    .option('--set <key=value>', 'override one config key (repeatable)', collect)
    .action(async (subject: string, opts: AuditFlags) => {
      const { auditSkill, isRunDir, runSkills } = await import('../app/audit.ts');
      const { readSkills } = await import('../app/eval/skills.ts');
      const { loadConfig } = await import('../config/load.ts');
      const { CommandExit, UserError } = await import('../errors.ts');
      const run = isRunDir(subject) ? runSkills(subject) : undefined;
      const configFile = opts.config ?? run?.configFile;
      if (!configFile)
        throw new UserError(
          `name the config whose data to audit against with --config (${run ? `${subject}/config.json records none` : 'a skill has no data of its own'})`,
        );
      const loaded = loadConfig(configFile, {
        overrides: [
          // The run's own overrides when its config is the one audited against.
          ...(run && !opts.config ? run.overrides.map((item) => ({ item, source: `${subject}/config.json` })) : []),
          ...(opts.set ?? []).map((item) => ({ item, source: '--set' })),
        ],
        flags: originalFlagsOf(opts),
      });
      const skill = run?.skill ?? readSkills([subject])[0]!.pkg;
      const against = opts.against ? readSkills([opts.against])[0]!.pkg : run?.against;
      const outcome = await auditSkill({
        loaded,
        skill,
        ...(against ? { against } : {}),
        ...(run ? { outRoot: subject, measured: run.measured } : {}),
      });
      if (opts.json)
        process.stdout.write(`${JSON.stringify({ ...outcome.report, seal: outcome.seal ?? null }, null, 2)}\n`);
      else {
        const what = run
          ? `${subject}: best skill against the initial one`
          : against
            ? `${subject} against ${opts.against}`
            : subject;
        process.stdout.write(`audit of ${what}: ${outcome.report.verdict}\n`);
        for (const c of outcome.report.checks) process.stdout.write(`  ${c.check}: ${c.verdict} (${c.summary})\n`);
        for (const line of outcome.lines.filter((l) => l.startsWith('  '))) process.stdout.write(`  ${line}\n`);
        const s = outcome.seal;
        process.stdout.write(
          s
            ? `  sealed_test: hard ${s.hard ?? '-'} on the test split, sealed by ${s.run} at ${s.sealed_at}${s.rescored.length ? `; scored again ${s.rescored.length} time(s): ${s.rescored.map((r) => r.hard ?? '-').join(', ')}` : ''}\n`
            : '  sealed_test: no test figure sealed for this skill on this target\n',
        );
      }
      if (outcome.rejects) throw new CommandExit(1);
    });
}
