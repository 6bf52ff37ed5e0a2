/**
 * One night, end to end:
 *
 *   harvest   the user's sessions since the last night (read-only, redacted)
 *   mine      them into tasks (or take a reviewed tasks file), split train / val / test by hash
 *   replay    the tasks through the target under the documents, K attempts each, judged
 *   consolidate each document with the engine's stages, inside its learned block, gated on val
 *   stage     the report, the diffs, the evidence and the proposals, pinned; `manifest.json` last
 *
 * Nothing live changes: `skillopt sleep adopt` does that. A night that reaches its budget stops
 * (nothing staged, the harvest window not advanced); a handoff night stops at the first stage
 * whose prompts are not answered yet, with the prompts written out.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../errors.ts';
import { RunStop } from '../../model/types.ts';
import { describeActivity, runningActivities } from '../../run/activity.ts';
import { acquireRunLock, type RunLock } from '../../run/lock.ts';
import { underAdoptionLock } from '../adoption/adopt.ts';
import { managedSkillName, managedSkillPath, readDocument, type LiveDocument } from '../documents/documents.ts';
import { resolveSkill, skillRoots } from '../documents/skills.ts';
import type { ReplayDocument } from '../replay/documents.ts';
import type { NightReport } from '../staging/report.ts';
import { reserveNightDir } from '../staging/staging.ts';
import { recordSkip } from '../state/skips.ts';
import { readState, writeState, type NightRecord } from '../state/state.ts';
import type { TaskRecord } from '../tasks/task.ts';
import { consolidate, type Consolidation, type ConsolidateSettings } from './consolidate.ts';
import { Evidence } from './evidence.ts';
import { buildNightModels, chooseModels, NO_BACKEND, type NightModels } from './models.ts';
import { nightProject, type NightOptions, type NightOutcome } from './night-options.ts';
import { nightTasks } from './night-tasks.ts';
import { splitCounts, stage } from './stage.ts';
import { nightLint } from './night-audit.ts';

/** Thrown at a stage boundary when the handoff waits for answers. */
class AnswersPending extends Error {}

function slug(p: string): string {
  return (
    (p || 'all-projects')
      .replace(/^[\\/]+/, '')
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .slice(-80) || 'root'
  );
}

/** The live documents of the night: the managed skill, then the memory file when asked for. */
function liveDocuments(o: NightOptions, project: string): LiveDocument[] {
  const c = o.loaded.config;
  const skillPath = managedSkillPath(c, o.harvest.locations.claudeHome, project || process.cwd());
  const docs = [readDocument(skillPath, 'skill', managedSkillName(skillPath))];
  if (c.documents.memory !== 'none') {
    if (!project)
      throw new UserError(
        `documents.memory: ${c.documents.memory} belongs to one project; run the night for one project (--project DIR), not for all`,
      );
    docs.push(readDocument(path.join(project, c.documents.memory), 'memory', c.documents.memory));
  }
  return docs;
}

export async function runNight(o: NightOptions): Promise<NightOutcome> {
  const choice = chooseModels(o.loaded, o.backend, o.budget);
  if (!choice.chosen) throw new UserError(NO_BACKEND);
  fs.mkdirSync(o.stateDir, { recursive: true });
  // The machine is busy training or evaluating: the night waits for another one.
  const [busy] = runningActivities();
  if (busy) {
    const reason = describeActivity(busy);
    recordSkip(o.stateDir, nightProject(o.harvest), reason);
    return { status: 'skipped', reason };
  }
  let lock: RunLock;
  try {
    lock = acquireRunLock(path.join(o.stateDir, 'locks', 'night'), {
      forceUnlock: o.forceUnlock,
      what: 'a Sleep night',
      otherwise: 'run this one later',
    });
  } catch (err) {
    return skip(o, err);
  }
  try {
    // A killed adoption leaves files half changed: finish it before reading them.
    underAdoptionLock(o.stateDir, () => undefined, { forceUnlock: o.forceUnlock });
    return await night(o, choice);
  } finally {
    lock.release();
  }
}

/** A lock held by another process (the only UserError taking one throws): this night is skipped, with a note for `status`. */
function skip(o: NightOptions, err: unknown): NightOutcome {
  if (!(err instanceof UserError)) throw err;
  recordSkip(o.stateDir, nightProject(o.harvest), err.message);
  return { status: 'skipped', reason: err.message };
}

async function night(o: NightOptions, choice: ReturnType<typeof chooseModels>): Promise<NightOutcome> {
  const c = o.loaded.config;
  const started = new Date();
  const clock = Date.now();
  const project = nightProject(o.harvest);
  const state = readState(o.stateDir);
  const nightNo = state.night + 1;
  const docs = liveDocuments(o, project);
  const handoffDir = choice.handoff ? path.join(o.stateDir, 'handoff', slug(project)) : undefined;
  // A handoff night keeps its files in the handoff folder until it completes.
  const work = handoffDir ?? reserveNightDir(o.stateDir, started);
  fs.mkdirSync(work, { recursive: true });
  const evidence = new Evidence(path.join(work, 'evidence.jsonl'));
  let models: NightModels | undefined;
  const record = (
    r: Pick<NightRecord, 'dir' | 'outcome' | 'n_sessions' | 'n_tasks' | 'documents' | 'note'>,
    advance: boolean,
  ) => {
    const totals = models?.stack.ledger.totals();
    state.history.push({
      night: nightNo,
      project,
      started_at: started.toISOString(),
      ended_at: new Date().toISOString(),
      tokens: totals ? totals.inputTokens + totals.outputTokens : 0,
      cost_usd: totals?.costUsd ?? 0,
      ...r,
    });
    state.night = nightNo;
    if (advance) state.last_harvest[project] = started.toISOString();
    writeState(o.stateDir, state);
  };
  const pendingCheck = () => {
    if (models?.handoff?.hasPending()) throw new AnswersPending();
  };
  try {
    models = await buildNightModels(choice, {
      ledgerFile: path.join(work, 'calls.jsonl'),
      environment: o.environment,
      handoffDir,
      elapsedMinutes: () => (Date.now() - clock) / 60_000,
      warn: o.warn,
      override: o.override,
    });
    evidence.log('cycle', 'start', {
      night: nightNo,
      project,
      models: choice.describe,
      documents: docs.map((d) => ({ name: d.name, path: d.path, exists: d.exists })),
    });

    const {
      tasks,
      nSessions,
      miner: minerName,
    } = await nightTasks({
      o,
      choice,
      models,
      project,
      docs,
      evidence,
      handoffDir,
      pendingCheck,
    });
    for (const t of tasks)
      evidence.log('mine', 'task_ready', {
        id: t.id,
        split: t.split,
        intent: t.intent.slice(0, 300),
        reference_kind: t.reference_kind,
        checks: t.judge.checks ?? [],
        rubric: t.reference_kind === 'rubric' ? t.reference : '',
        source_sessions: t.source_sessions,
      });
    o.say(
      `night ${nightNo}: ${nSessions} sessions -> ${tasks.length} tasks (${Object.entries(splitCounts(tasks))
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')})`,
    );
    if (tasks.length === 0) {
      evidence.log('cycle', 'end', { outcome: 'no_tasks' });
      record(
        { dir: '', outcome: 'no_tasks', n_sessions: nSessions, n_tasks: 0, documents: [], note: 'no tasks mined' },
        true,
      );
      if (handoffDir) fs.rmSync(handoffDir, { recursive: true, force: true });
      return { status: 'no_tasks', dir: handoffDir ? undefined : work, sessions: nSessions };
    }

    // consolidate each document in turn; later ones run beside the earlier ones' proposals
    const settings: ConsolidateSettings = {
      editBudget: c.consolidate.edit_budget,
      samples: c.consolidate.samples,
      gate: c.consolidate.gate,
      scoring: { metric: c.consolidate.gate_metric, mixedWeight: c.consolidate.gate_mixed_weight },
      noRegression: c.consolidate.no_regression,
      minibatchSize: c.consolidate.minibatch_size,
      workers: c.consolidate.workers,
      seed: c.mine.seed,
    };
    const results: { doc: LiveDocument; result: Consolidation }[] = [];
    const current = (d: LiveDocument): ReplayDocument => {
      const done = results.find((r) => r.doc === d);
      return { name: d.name, kind: d.kind, text: done ? done.result.proposedText : d.working };
    };
    const run = async (doc: LiveDocument, docTasks: TaskRecord[], others: ReplayDocument[]) => {
      o.say(`  ${doc.kind} ${doc.name}: replaying ${docTasks.length} tasks`);
      const result = await consolidate({
        name: doc.name,
        kind: doc.kind,
        text: doc.working,
        others,
        ...(doc.package ? { package: doc.package } : {}),
        tasks: docTasks,
        models: { target: models!.target, judge: models!.judge, opt: models!.opt },
        settings,
        evidence,
        dir: path.join(work, 'evidence', `${doc.kind}-${doc.name}`.replace(/[^A-Za-z0-9._-]+/g, '_')),
        checkpoint: pendingCheck,
      });
      pendingCheck();
      results.push({ doc, result });
      o.say(`  ${doc.kind} ${doc.name}: ${result.action}${result.reason ? ` (${result.reason})` : ''}`);
    };
    for (const doc of docs) await run(doc, tasks, docs.filter((d) => d !== doc).map(current));

    // the fan-out: each skill that sessions invoked, on those sessions' tasks
    const skipped: NightReport['skipped'] = [];
    if (c.documents.fanout) {
      const roots = skillRoots(project || process.cwd(), o.harvest.locations.claudeHome, c.documents.skill_roots);
      const groups = new Map<string, TaskRecord[]>();
      for (const t of tasks)
        if (t.skill_hint && t.skill_hint !== docs[0]!.name)
          groups.set(t.skill_hint, [...(groups.get(t.skill_hint) ?? []), t]);
      for (const [name, groupTasks] of groups) {
        const found = resolveSkill(name, roots);
        if (found.status !== 'found') {
          skipped.push({
            skill: name,
            reason:
              found.status === 'ambiguous'
                ? `found in several places (${found.candidates.join(', ')})`
                : found.status === 'rejected'
                  ? found.why
                  : 'no SKILL.md of that name under the skill folders',
          });
          continue;
        }
        if (docs.some((d) => d.realpath === found.path)) {
          skipped.push({ skill: name, reason: 'it is the managed skill' });
          continue;
        }
        let doc: LiveDocument;
        try {
          doc = readDocument(found.path, 'skill', name);
        } catch (err) {
          skipped.push({ skill: name, reason: (err as Error).message });
          continue;
        }
        await run(doc, groupTasks, docs.filter((d) => d.kind === 'memory').map(current));
      }
    }

    // stage
    const dir = handoffDir ? reserveNightDir(o.stateDir, started) : work;
    const lint = nightLint(c.consolidate.audit, tasks);
    const report = stage(o, {
      ...(lint ? { lint } : {}),
      dir,
      nightNo,
      project,
      started,
      backend: choice.describe,
      nSessions,
      miner: minerName,
      tasks,
      results,
      skipped,
      models,
    });
    evidence.log('cycle', 'end', {
      outcome: 'completed',
      staged: report.documents.filter((d) => d.staged).map((d) => d.document),
    });
    record(
      {
        dir,
        outcome: 'staged',
        n_sessions: nSessions,
        n_tasks: tasks.length,
        documents: report.documents.map((d) => ({
          name: d.document,
          action: d.action,
          baseline: d.baseline?.gate ?? null,
          candidate: d.candidate?.gate ?? null,
          accepted: d.accepted,
        })),
        note: '',
      },
      true,
    );
    if (handoffDir) {
      // The handoff folder (prompts, answers, evidence, calls) goes with the night's record.
      evidence.close();
      models.close();
      fs.renameSync(handoffDir, path.join(dir, 'handoff'));
    }
    return { status: 'staged', dir, report };
  } catch (err) {
    if (models?.handoff?.hasPending()) {
      const prompts = models.handoff.flush(o.rerun);
      return {
        status: 'handoff_pending',
        dir: handoffDir!,
        prompts: prompts.length,
        file: path.join(handoffDir!, 'PROMPTS.md'),
      };
    }
    if (err instanceof RunStop) {
      evidence.log('cycle', 'end', { outcome: 'stopped', message: err.message });
      record({ dir: '', outcome: 'stopped', n_sessions: 0, n_tasks: 0, documents: [], note: err.message }, false);
      return { status: 'stopped', dir: work, message: err.message };
    }
    // Refused before any model was built (a bad backend, a budget that cannot hold): no night to keep.
    if (!models && !handoffDir) {
      evidence.close();
      fs.rmSync(work, { recursive: true, force: true });
    }
    throw err;
  } finally {
    evidence.close();
    models?.close();
  }
}
