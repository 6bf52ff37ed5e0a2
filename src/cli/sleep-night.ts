/** `skillopt sleep run`, `status`, `history`, `adopt` and `rollback`: a night, what it left, and its adoption. */
import path from 'node:path';
import { CommandExit } from '../errors.ts';
import {
  budgetOf,
  context,
  print,
  type AdoptCliOptions,
  type CommonOptions,
  type ModelCliOptions,
} from './sleep-options.ts';

export async function runRun(opts: ModelCliOptions): Promise<void> {
  const { runNight } = await import('../sleep/night/night.ts');
  const { EXIT_HANDOFF_PENDING } = await import('../sleep/night/night-options.ts');
  const { tilde } = await import('../sleep/harvest/report.ts');
  const { loaded, stateDir, resolved } = await context(opts);
  const say = (line: string) => !opts.json && process.stderr.write(`${line}\n`);
  const rerun = ['skillopt sleep run', ...process.argv.slice(process.argv.indexOf('run') + 1)].join(' ');
  const outcome = await runNight({
    loaded,
    harvest: resolved,
    sinceGiven: opts.since !== undefined,
    stateDir,
    backend: opts.backend,
    budget: budgetOf(opts),
    tasksFile: opts.tasks,
    rerun,
    say,
    warn: (m) => process.stderr.write(`warning: ${m}\n`),
    forceUnlock: opts.forceUnlock,
  });
  if (opts.json)
    print(
      JSON.stringify(
        outcome.status === 'staged' ? { status: outcome.status, dir: outcome.dir, report: outcome.report } : outcome,
        null,
        2,
      ),
    );
  switch (outcome.status) {
    case 'staged': {
      if (opts.json) return;
      const staged = outcome.report.documents.filter((d) => d.staged);
      print(`night ${outcome.report.night} staged in ${tilde(outcome.dir)}`);
      for (const d of outcome.report.documents)
        print(
          `  ${d.kind} ${d.document}: ${d.action}${d.baseline && d.candidate ? ` (val ${d.baseline.gate.toFixed(3)} → ${d.candidate.gate.toFixed(3)})` : ''}${d.staged ? ', waiting for adoption' : d.audit?.verdict === 'fail' && d.accepted ? `, ${d.reason}` : ''}`,
        );
      print(`report: ${tilde(path.join(outcome.dir, 'report.md'))}`);
      print(
        staged.length
          ? 'Nothing live has changed. Review diff.patch there, then: skillopt sleep adopt'
          : 'Nothing to adopt tonight; nothing live has changed.',
      );
      return;
    }
    case 'no_tasks':
      if (!opts.json) print(`no task to learn from in ${outcome.sessions} session(s); nothing staged`);
      return;
    case 'handoff_pending':
      if (!opts.json)
        print(
          `${outcome.prompts} prompt(s) wait for answers: read ${tilde(outcome.file)}, write each answer to answers/<id>.md beside it, then run the same command again`,
        );
      throw new CommandExit(EXIT_HANDOFF_PENDING);
    case 'skipped':
      if (!opts.json) print(`night skipped, the machine is busy: ${outcome.reason}`);
      return;
    case 'stopped':
      throw new CommandExit(
        1,
        `${outcome.message} Nothing was staged, and the next night harvests the same sessions again.`,
      );
  }
}

export async function runStatus(opts: AdoptCliOptions): Promise<void> {
  const { statusOf, formatStatus } = await import('../sleep/state/status.ts');
  const { stateDir, project } = await context({ config: opts.config, project: opts.project });
  const handoffRoot = path.join(stateDir, 'handoff');
  const fs = await import('node:fs');
  const handoffs = fs.existsSync(handoffRoot) ? fs.readdirSync(handoffRoot).map((d) => path.join(handoffRoot, d)) : [];
  const view = statusOf(stateDir, project, handoffs);
  print(opts.json ? JSON.stringify(view, null, 2) : formatStatus(view));
}

export async function runHistory(opts: CommonOptions & { limit?: number }): Promise<void> {
  const { readState } = await import('../sleep/state/state.ts');
  const { historyRows } = await import('../sleep/state/status.ts');
  const { stateDir } = await context({ config: opts.config });
  const history = readState(stateDir).history.slice(-(opts.limit || 1000));
  if (opts.json) return print(JSON.stringify(history, null, 2));
  print(history.length ? historyRows(history).join('\n') : 'no night yet');
}

async function nightFor(opts: AdoptCliOptions, stateDir: string, project: string): Promise<string> {
  const { nightDirOf, stagedNights } = await import('../sleep/staging/staging.ts');
  const { UserError } = await import('../errors.ts');
  if (opts.night) return nightDirOf(stateDir, opts.night);
  const [latest] = stagedNights(stateDir, project);
  if (!latest)
    throw new UserError(
      `no staged night for ${project || 'every project'} in ${stateDir}: run \`skillopt sleep run\` first (or name one with --night)`,
    );
  return latest.dir;
}

export async function runAdopt(opts: AdoptCliOptions): Promise<void> {
  const { adopt } = await import('../sleep/adoption/adopt.ts');
  const { tilde } = await import('../sleep/harvest/report.ts');
  const { stateDir, project } = await context({ config: opts.config, project: opts.project });
  const night = await nightFor(opts, stateDir, project);
  const result = adopt(stateDir, night, opts.skill, { forceUnlock: opts.forceUnlock });
  if (opts.json) return print(JSON.stringify({ ok: true, ...result }, null, 2));
  for (const a of result.adopted)
    print(`adopted ${a.name}: ${tilde(a.live_path)}${a.backup ? ` (backup: ${tilde(a.backup)})` : ' (new file)'}`);
  print('undo with: skillopt sleep rollback');
}

export async function runRollback(opts: AdoptCliOptions): Promise<void> {
  const { rollback } = await import('../sleep/adoption/adopt.ts');
  const { nightDirOf } = await import('../sleep/staging/staging.ts');
  const { tilde } = await import('../sleep/harvest/report.ts');
  const { stateDir } = await context({ config: opts.config });
  const result = rollback(stateDir, opts.night ? nightDirOf(stateDir, opts.night) : undefined, {
    forceUnlock: opts.forceUnlock,
  });
  if (opts.json) return print(JSON.stringify({ ok: true, ...result }, null, 2));
  for (const r of result.restored)
    print(
      `${r.removed ? 'removed' : 'restored'} ${r.name}: ${tilde(r.live_path)}${r.removed ? ' (the adoption had created it)' : ' (as it was before the adoption)'}`,
    );
}
