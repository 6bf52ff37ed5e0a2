/** `skillopt deploy`: a run's best skill into an agent's skill folder, and back out again. */
import path from 'node:path';
import { Option, type Command } from 'commander';
import { UserError } from '../errors.ts';
import { DEPLOY_AGENTS, type DeployAgent, type Scope } from '../deploy/agents.ts';
import { programName, shellWord, shownPath } from '../run/resume-command.ts';

interface DeployFlags {
  to: DeployAgent;
  project?: string;
  user?: boolean;
  name?: string;
  description?: string;
  dryRun?: boolean;
  rollback?: boolean;
  force?: boolean;
}

const WHERE = `
Where each agent reads the skill (<name>/SKILL.md under):
  claude   .claude/skills in the project, or ~/.claude/skills ($CLAUDE_CONFIG_DIR/skills)
  codex    .agents/skills in the project, or ~/.codex/skills ($CODEX_HOME/skills)
  copilot  .github/skills in the project, or ~/.copilot/skills ($COPILOT_HOME/skills)
  cursor   .cursor/skills in the project, or ~/.cursor/skills
  agents   .agents/skills in the project, or ~/.agents/skills (the shared folder of the Agent Skills standard)
The file replaced is kept; --rollback puts it back exactly (or removes the skill a deployment created).`;

export function registerDeploy(program: Command): void {
  program
    .command('deploy')
    .description(
      "Write a run's best_skill.md where an agent reads skills (after showing the diff), or roll a deployment back",
    )
    .argument('[run]', 'the run directory (holding best_skill.md)')
    .addOption(
      new Option('--to <agent>', 'the agent that will read it').choices([...DEPLOY_AGENTS]).makeOptionMandatory(),
    )
    .option('--project <dir>', "the project's skill folder (default: the working directory)")
    .option('--user', "the user's own skill folder, for every project")
    .option('--name <name>', "the skill's name and folder (default: its front matter's, else from the run)")
    .option(
      '--description <text>',
      'when the agent should use it (front matter, at most 1,024 characters; default: made from the skill and the tasks of the run)',
    )
    .option('--dry-run', 'show the diff, write nothing')
    .option(
      '--rollback',
      'undo the last deployment of the skill (--name) in that folder: the previous file back, exactly',
    )
    .option('--force', 'with --rollback: even when the deployed file was changed since')
    .addHelpText('after', WHERE)
    .action(async (run: string | undefined, opts: DeployFlags) => {
      if (opts.project !== undefined && opts.user)
        throw new UserError('--project and --user name two places: give one of them');
      const scope: Scope = opts.user ? { user: true } : { project: opts.project ?? process.cwd() };
      const say = (text: string) => process.stdout.write(`${text}\n`);
      const { deploySkill, rollbackSkill } = await import('../deploy/deploy.ts');
      if (opts.rollback) {
        if (run)
          throw new UserError(
            `--rollback undoes the last deployment in the folder; it takes no run directory (got ${run})`,
          );
        const r = rollbackSkill({ agent: opts.to, scope, name: opts.name, force: opts.force });
        say(
          r.action === 'restored'
            ? `restored the previous ${r.file}`
            : `removed ${r.file} (there was none before it was deployed)`,
        );
        if (r.remaining)
          say(`${r.remaining} earlier deployment${r.remaining > 1 ? 's' : ''} of this skill can be rolled back too`);
        return;
      }
      if (!run)
        throw new UserError(
          'name the run directory to deploy from (skillopt deploy RUN_DIR --to AGENT), or use --rollback',
        );
      const r = deploySkill({
        run,
        agent: opts.to,
        scope,
        name: opts.name,
        description: opts.description,
        dryRun: opts.dryRun,
      });
      if (r.allowedTools.length > 0)
        say(
          `allowed-tools (the skill's own front matter: the agent may use them without asking): ${r.allowedTools.join(', ')}`,
        );
      if (r.diff) process.stdout.write(r.diff);
      for (const note of r.notes) process.stderr.write(`note: ${note}\n`);
      for (const warning of r.warnings) process.stderr.write(`warning: ${warning}\n`);
      if (!r.changed) say(`${r.file} already holds this skill: nothing written`);
      else if (!r.written) say(`dry run: ${r.file} not written`);
      else {
        const undo = [
          programName(),
          'deploy',
          '--rollback',
          '--to',
          opts.to,
          ...('user' in scope
            ? ['--user']
            : ['--project', path.resolve(scope.project) === process.cwd() ? '.' : shownPath(scope.project)]),
          '--name',
          r.name,
        ]
          .map(shellWord)
          .join(' ');
        say(`deployed to ${r.file}\nto undo: ${undo} (${r.backup ? 'puts the previous file back' : 'removes it'})`);
      }
    });
}
