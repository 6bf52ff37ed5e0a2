/** `skillopt deploy`: a run's best skill into an agent's skill folder, and back out again. */
import path from 'node:path';
import { Option, type Command } from 'commander';
import { UserError } from '../errors.ts';
import { DEPLOY_AGENTS, type DeployAgent, type Scope } from '../deploy/agents.ts';
import type { Recovered } from '../deploy/swap.ts';
import { programName, shellWord, shownPath } from '../run/resume-command.ts';

interface DeployFlags {
  to: DeployAgent;
  project?: string;
  user?: boolean;
  name?: string;
  description?: string;
  dryRun?: boolean;
  rollback?: boolean;
  status?: boolean;
  force?: boolean;
  audit?: boolean | string;
}

const WHERE = `
Where each agent reads the skill (<name>/SKILL.md, or the whole <name>/ folder of a package, under):
  claude   .claude/skills in the project, or ~/.claude/skills ($CLAUDE_CONFIG_DIR/skills)
  codex    .agents/skills in the project, or ~/.codex/skills ($CODEX_HOME/skills)
  copilot  .github/skills in the project, or ~/.copilot/skills ($COPILOT_HOME/skills)
  cursor   .cursor/skills in the project, or ~/.cursor/skills
  agents   .agents/skills in the project, or ~/.agents/skills (the shared folder of the Agent Skills standard)
A run with best_skill/ deploys that package as the whole folder, swapped in as one unit; else best_skill.md
becomes SKILL.md. What is replaced is kept; --rollback puts it back exactly (or removes the skill a
deployment created). An interrupted deployment is finished or undone by the next deploy, --rollback or --status.`;

export function registerDeploy(program: Command): void {
  program
    .command('deploy')
    .description(
      "Write a run's best skill (best_skill/ or best_skill.md) where an agent reads skills, after showing the diff; or roll a deployment back",
    )
    .argument('[run]', 'the run directory (holding best_skill.md, and best_skill/ for a package)')
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
    .option('--rollback', 'undo the last deployment of the skill (--name) in that folder: what was there back, exactly')
    .option(
      '--status',
      'list the skills deployed in that folder and whether each still holds what was deployed (finishing an interrupted deployment)',
    )
    .option('--force', 'deploy over, or roll back, a skill changed since it was deployed')
    .option(
      '--audit [config]',
      'audit the best skill first (skillopt audit: over the config the run was started with, or this one) and deploy nothing when the audit rejects it',
    )
    .addHelpText('after', WHERE)
    .action(async (run: string | undefined, opts: DeployFlags) => {
      if (opts.project !== undefined && opts.user)
        throw new UserError('--project and --user name two places: give one of them');
      const scope: Scope = opts.user ? { user: true } : { project: opts.project ?? process.cwd() };
      const say = (text: string) => process.stdout.write(`${text}\n`);
      const { deploySkill, rollbackSkill } = await import('../deploy/deploy.ts');
      const sayRecovered = (r: { recovered?: Recovered }, name: string) => {
        if (r.recovered)
          process.stderr.write(
            `note: an interrupted ${r.recovered.op === 'deploy' ? 'deployment' : 'rollback'} of ${name} was ${r.recovered.outcome === 'undone' ? 'undone' : 'finished'} first\n`,
          );
      };
      if (opts.rollback || opts.status) {
        if (opts.rollback && opts.status) throw new UserError('--rollback and --status: give one of them');
        const flag = opts.rollback ? '--rollback' : '--status';
        if (run)
          throw new UserError(`${flag} works on the agent's skill folder; it takes no run directory (got ${run})`);
      }
      if (opts.status) {
        const { deployStatus } = await import('../deploy/status.ts');
        const s = deployStatus({ agent: opts.to, scope });
        if (s.skills.length === 0) say(`no deployment by skillopt is recorded in ${s.folder}`);
        for (const k of s.skills) {
          sayRecovered(k, k.name);
          const count = `${k.deployments} deployment${k.deployments === 1 ? '' : 's'}`;
          const last = k.last ? `, the last a ${k.last.kind} from ${k.last.run} (${k.last.time})` : '';
          const state = !k.deployments
            ? 'nothing left to roll back'
            : k.changes.length
              ? `changed since: ${k.changes.join(', ')}`
              : 'holds what was deployed';
          say(`${k.dir}: ${count}${last}; ${state}`);
        }
        return;
      }
      if (opts.rollback) {
        const r = rollbackSkill({ agent: opts.to, scope, name: opts.name, force: opts.force });
        sayRecovered(r, path.basename(path.dirname(r.file)));
        const what = r.dir ?? r.file;
        say(
          r.action === 'restored'
            ? `restored the previous ${what}`
            : `removed ${what} (there was none before it was deployed)`,
        );
        if (r.remaining)
          say(`${r.remaining} earlier deployment${r.remaining > 1 ? 's' : ''} of this skill can be rolled back too`);
        return;
      }
      if (!run)
        throw new UserError(
          'name the run directory to deploy from (skillopt deploy RUN_DIR --to AGENT), or use --rollback',
        );
      if (opts.audit) await auditBeforeDeploy(run, typeof opts.audit === 'string' ? opts.audit : undefined, say);
      const r = deploySkill({
        run,
        agent: opts.to,
        scope,
        name: opts.name,
        description: opts.description,
        dryRun: opts.dryRun,
        force: opts.force,
      });
      sayRecovered(r, r.name);
      if (r.allowedTools.length > 0)
        say(
          `allowed-tools (the skill's own front matter: the agent may use them without asking): ${r.allowedTools.join(', ')}`,
        );
      if (r.diff) process.stdout.write(r.diff);
      for (const note of r.notes) process.stderr.write(`note: ${note}\n`);
      for (const warning of r.warnings) process.stderr.write(`warning: ${warning}\n`);
      const place = r.kind === 'package' ? `${r.dir}/` : r.file;
      if (!r.changed) say(`${place} already holds this skill: nothing written`);
      else if (!r.written) say(`dry run: ${place} not written`);
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
        const previous = r.kind === 'package' ? 'puts the previous folder back' : 'puts the previous file back';
        say(`deployed to ${place}\nto undo: ${undo} (${r.backup ? previous : 'removes it'})`);
      }
    });
}

/** `--audit`: the run's best skill against its initial one; a rejection stops the deployment before anything is written. */
async function auditBeforeDeploy(run: string, config: string | undefined, say: (text: string) => void): Promise<void> {
  const { auditSkill, runSkills } = await import('../app/audit.ts');
  const { loadConfig } = await import('../config/load.ts');
  const { CommandExit } = await import('../errors.ts');
  const skills = runSkills(run);
  const file = config ?? skills.configFile;
  if (!file) throw new UserError(`--audit: ${run}/config.json names no config; give one (--audit CONFIG)`);
  const overrides = config ? [] : skills.overrides.map((item) => ({ item, source: `${run}/config.json` }));
  const outcome = await auditSkill({
    loaded: loadConfig(file, { overrides }),
    skill: skills.skill,
    against: skills.against,
    outRoot: run,
    measured: skills.measured,
  });
  say(`audit of the best skill: ${outcome.report.verdict}`);
  for (const line of outcome.lines) say(`  ${line}`);
  if (outcome.rejects) {
    process.stderr.write(
      'the audit rejects this skill: nothing deployed (deploy without --audit to deploy it anyway)\n',
    );
    throw new CommandExit(1);
  }
}
