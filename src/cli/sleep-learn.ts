/** `skillopt sleep harvest`, `dry-run` and `mine`: what Sleep reads and would learn from, before a night. */
import path from 'node:path';
import { CommandExit } from '../errors.ts';
import type { HarvestResult } from '../sleep/harvest/harvest.ts';
import type { resolveHarvest } from '../sleep/harvest/options.ts';
import { budgetOf, context, print, type HarvestCliOptions, type ModelCliOptions } from './sleep-options.ts';

export async function runHarvest(opts: HarvestCliOptions): Promise<void> {
  const { harvest } = await import('../sleep/harvest/harvest.ts');
  const { formatHarvest, tilde } = await import('../sleep/harvest/report.ts');
  const { describeScope } = await import('../sleep/harvest/scope.ts');
  const { writeDigests } = await import('../sleep/harvest/digests-file.ts');
  const { stamp } = await import('../sleep/staging/staging.ts');
  const { stateDir, resolved } = await context(opts);
  const result = harvest(resolved);
  const output = path.resolve(opts.out ?? path.join(stateDir, 'harvests', `${stamp()}.jsonl`));
  writeDigests(output, result.digests);
  if (opts.json) {
    print(
      JSON.stringify(
        {
          ...(await harvestFacts(resolved, result)),
          output,
        },
        null,
        2,
      ),
    );
    return;
  }
  print(
    `Harvest\n  window: ${resolved.windowText}\n  projects: ${describeScope(resolved.scope)}\n${formatHarvest(result)}`,
  );
  print(`wrote ${result.digests.length} session digests (secrets redacted) to ${tilde(output)}`);
}

export async function runDryRun(opts: ModelCliOptions): Promise<void> {
  const { harvest } = await import('../sleep/harvest/harvest.ts');
  const { formatHarvest, tilde } = await import('../sleep/harvest/report.ts');
  const { describeScope } = await import('../sleep/harvest/scope.ts');
  const { mine } = await import('../sleep/mine/mine.ts');
  const { chooseModels } = await import('../sleep/night/models.ts');
  const { planNight, formatNightPlan } = await import('../sleep/night/plan.ts');
  const { managedSkillName, managedSkillPath, readDocument } = await import('../sleep/documents/documents.ts');
  const { countTokens } = await import('../skill/document.ts');
  const { safeLine } = await import('../sleep/staging/report.ts');
  const { loaded, resolved, project } = await context(opts);
  const c = loaded.config;
  const choice = chooseModels(loaded, opts.backend, budgetOf(opts));
  const result = harvest(resolved);
  const skillPath = managedSkillPath(c, resolved.locations.claudeHome, project || process.cwd());
  const documents = [readDocument(skillPath, 'skill', managedSkillName(skillPath))];
  if (c.documents.memory !== 'none' && project)
    documents.push(readDocument(path.join(project, c.documents.memory), 'memory', c.documents.memory));
  const managed = documents[0]!;
  const { tasks } = await mine(result.digests, {
    maxTasks: c.mine.max_tasks,
    val: c.mine.val_fraction,
    test: c.mine.test_fraction,
    seed: c.mine.seed,
    target: c.mine.target_filter && managed.exists ? { text: managed.text, path: managed.path } : undefined,
  });
  const plan = planNight({
    config: c,
    choice,
    digests: result.digests,
    tasks,
    documentTokens: documents.map((d) => countTokens(d.working)),
  });
  if (opts.json) {
    print(
      JSON.stringify(
        {
          ...(await harvestFacts(resolved, result)),
          models: choice.describe,
          documents: documents.map((d) => ({ name: d.name, kind: d.kind, path: d.path, exists: d.exists })),
          tasks: tasks.map((t) => ({
            id: t.id,
            split: t.split,
            outcome: t.outcome,
            intent: t.intent,
            skill_hint: t.skill_hint,
          })),
          plan,
        },
        null,
        2,
      ),
    );
    return;
  }
  const lines = [
    'Dry run: what Sleep would harvest and learn (nothing is written, no model is called)',
    `  window: ${resolved.windowText}`,
    `  projects: ${describeScope(resolved.scope)}`,
    formatHarvest(result),
    `${result.digests.length} sessions would be harvested`,
    '',
    `Documents a night would train (models: ${choice.describe}):`,
    ...documents.map(
      (d) => `  ${d.kind} ${d.name}: ${tilde(d.path)}${d.exists ? '' : ' (does not exist yet: a night proposes it)'}`,
    ),
    '',
    tasks.length
      ? `Tasks it would learn from (${tasks.length}; mined without a model here${c.mine.miner === 'model' ? ': a night lets the model rewrite them with rubrics and checks' : ''}):`
      : 'No task: no session in the window has a request to learn from.',
    ...tasks.slice(0, 20).map((t) => `  [${t.split}/${t.outcome}] ${safeLine(t.intent, 100)}`),
    ...(tasks.length > 20 ? [`  … and ${tasks.length - 20} more`] : []),
    '',
    formatNightPlan(plan),
  ];
  print(lines.join('\n'));
}

export async function runMine(opts: ModelCliOptions): Promise<void> {
  const { harvest } = await import('../sleep/harvest/harvest.ts');
  const { tilde } = await import('../sleep/harvest/report.ts');
  const { mine } = await import('../sleep/mine/mine.ts');
  const { chooseModels, buildNightModels } = await import('../sleep/night/models.ts');
  const { writeTasksFile } = await import('../sleep/tasks/tasks-file.ts');
  const { stamp } = await import('../sleep/staging/staging.ts');
  const { managedSkillPath } = await import('../sleep/documents/documents.ts');
  const { loaded, stateDir, resolved, project } = await context(opts);
  const c = loaded.config;
  const choice = chooseModels(loaded, opts.backend, budgetOf(opts));
  if (choice.handoff)
    throw new CommandExit(
      2,
      'mine with --backend handoff: a night with the handoff asks for the mining prompts itself (skillopt sleep run --backend handoff)',
    );
  const result = harvest(resolved);
  const started = Date.now();
  const models =
    choice.chosen && c.mine.miner === 'model'
      ? await buildNightModels(choice, {
          elapsedMinutes: () => (Date.now() - started) / 60_000,
          warn: (m) => process.stderr.write(`warning: ${m}\n`),
        })
      : undefined;
  try {
    const mined = await mine(result.digests, {
      maxTasks: c.mine.max_tasks,
      val: c.mine.val_fraction,
      test: c.mine.test_fraction,
      seed: c.mine.seed,
      model: models ? { ctx: models.opt, maxSessions: c.mine.max_tasks * 3 } : undefined,
    });
    const out = path.resolve(opts.out ?? path.join(stateDir, 'tasks', `${stamp()}.json`));
    writeTasksFile(out, {
      project,
      transcript_source: mined.miner,
      n_sessions: result.digests.length,
      target_skill_path: managedSkillPath(c, resolved.locations.claudeHome, project || process.cwd()),
      reviewed: false,
      tasks: mined.tasks,
    });
    if (opts.json)
      return print(
        JSON.stringify(
          { output: out, sessions: result.digests.length, miner: mined.miner, tasks: mined.tasks.length },
          null,
          2,
        ),
      );
    print(
      `mined ${mined.tasks.length} tasks from ${result.digests.length} sessions (${mined.miner === 'model' ? 'by the model' : 'without a model'}) into ${tilde(out)}`,
    );
    print(
      `Review them (remove what must not go to a model, fix references, add checks), set "reviewed": true, then: skillopt sleep run --tasks ${tilde(out)}`,
    );
  } finally {
    models?.close();
  }
}

/** What a harvest covered, as `--json` prints it: the window, the projects, the sessions and each source. */
async function harvestFacts(resolved: ReturnType<typeof resolveHarvest>, result: HarvestResult) {
  const { describeScope } = await import('../sleep/harvest/scope.ts');
  return {
    window: {
      since: resolved.since === undefined ? null : new Date(resolved.since).toISOString(),
      text: resolved.windowText,
    },
    scope: describeScope(resolved.scope),
    sessions: result.digests.length,
    sources: result.sources,
  };
}
