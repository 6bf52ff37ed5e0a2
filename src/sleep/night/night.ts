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
import { unifiedDiff } from '../../skill/document.ts';
import { writeFileAtomic, writeJsonAtomic } from '../../run/atomic.ts';
import { describeActivity, runningActivities } from '../../run/activity.ts';
import { acquireRunLock, type RunLock } from '../../run/lock.ts';
import { RunStop, type ChatModel } from '../../model/types.ts';
import { UserError } from '../../errors.ts';
import { underAdoptionLock } from '../adoption/adopt.ts';
import type { LoadedSleepConfig } from '../config.ts';
import { consolidate, type Consolidation, type ConsolidateSettings } from './consolidate.ts';
import type { SessionDigest } from '../harvest/digest.ts';
import { managedSkillName, managedSkillPath, readDocument, type LiveDocument } from '../documents/documents.ts';
import { Evidence } from './evidence.ts';
import { readDigests, writeDigests } from '../harvest/digests-file.ts';
import { harvest } from '../harvest/harvest.ts';
import type { ResolvedHarvest } from '../harvest/options.ts';
import { mine } from '../mine/mine.ts';
import { buildNightModels, chooseModels, NO_BACKEND, type NightModels } from './models.ts';
import type { ReplayDocument } from '../replay/documents.ts';
import { renderReport, type DocumentReport, type NightReport } from '../staging/report.ts';
import { resolveSkill, skillRoots } from '../documents/skills.ts';
import { recordSkip } from '../state/skips.ts';
import { reserveNightDir, writeManifest, type Proposal } from '../staging/staging.ts';
import { readState, writeState, type NightRecord } from '../state/state.ts';
import { readTasksFile, writeTasksFile } from '../tasks/tasks-file.ts';
import type { TaskRecord } from '../tasks/task.ts';

export interface NightOptions {
  loaded: LoadedSleepConfig;
  /** The harvest's sources, scope, window and limit (the window is the last night's end unless `--since` set it). */
  harvest: ResolvedHarvest;
  /** Whether `--since` was given (else the window starts where the project's last night ended). */
  sinceGiven: boolean;
  stateDir: string;
  /** `--backend`. */
  backend?: string;
  budget?: Partial<{ max_usd: number; max_tokens: number; max_minutes: number; max_calls: number }>;
  tasksFile?: string;
  environment?: Record<string, string | undefined>;
  /** The models to use instead of building them (tests). */
  override?: Partial<Record<'target' | 'optimizer' | 'judge', ChatModel>>;
  /** The command that runs this night again (for the handoff's instructions). */
  rerun: string;
  say: (line: string) => void;
  warn: (message: string) => void;
  forceUnlock?: boolean;
}

export type NightOutcome =
  | { status: 'staged'; dir: string; report: NightReport }
  | { status: 'no_tasks'; dir?: string; sessions: number }
  | { status: 'stopped'; dir?: string; message: string }
  | { status: 'handoff_pending'; dir: string; prompts: number; file: string }
  /** The machine was busy: a training run or an evaluation was going, or another night held the lock. Nothing ran. */
  | { status: 'skipped'; reason: string };

/** Thrown at a stage boundary when the handoff waits for answers. */
class AnswersPending extends Error {}

/** The project a night is for: the one folder in scope ('' for every project). */
export function nightProject(h: ResolvedHarvest): string {
  return h.scope.kind === 'projects' ? h.scope.roots[0]! : '';
}

function slug(p: string): string {
  return (
    (p || 'all-projects')
      .replace(/^[\\/]+/, '')
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .slice(-80) || 'root'
  );
}

function splitCounts(tasks: TaskRecord[]): Record<'train' | 'val' | 'test', number> {
  return {
    train: tasks.filter((t) => t.split === 'train').length,
    val: tasks.filter((t) => t.split === 'val').length,
    test: tasks.filter((t) => t.split === 'test').length,
  };
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

    // harvest and mine (a handoff night pins both, so that every round asks the same prompts)
    let tasks: TaskRecord[];
    let nSessions = 0;
    let minerName: NightReport['miner'] = 'tasks file';
    const pinnedTasks = handoffDir && path.join(handoffDir, 'tasks.json');
    const split = { val: c.mine.val_fraction, test: c.mine.test_fraction, seed: c.mine.seed };
    if (o.tasksFile) {
      const loaded = readTasksFile(o.tasksFile, split);
      for (const w of loaded.warnings) o.warn(w);
      if (!loaded.reviewed && !isSim(choice)) {
        throw new UserError(
          `${o.tasksFile} is not marked reviewed: its tasks would go to the models as they are. Read them, remove what must not be sent, set "reviewed": true, and run again`,
        );
      }
      tasks = loaded.tasks;
      nSessions = loaded.n_sessions;
    } else if (pinnedTasks && fs.existsSync(pinnedTasks)) {
      const loaded = readTasksFile(pinnedTasks, split);
      tasks = loaded.tasks;
      nSessions = loaded.n_sessions;
      minerName = loaded.transcript_source === 'model' ? 'model' : 'heuristic';
    } else {
      const digests = harvestDigests(o, handoffDir);
      nSessions = digests.length;
      for (const d of digests)
        evidence.log('harvest', 'session', {
          source: d.source,
          session_id: d.session_id,
          prompts: d.user_prompts.slice(0, 6).map((p) => p.slice(0, 200)),
          final: (d.assistant_finals.at(-1) ?? '').slice(0, 300),
          feedback: d.feedback_signals,
        });
      const managed = docs[0]!;
      const mined = await mine(digests, {
        maxTasks: c.mine.max_tasks,
        ...split,
        model: c.mine.miner === 'model' ? { ctx: models.opt, maxSessions: c.mine.max_tasks * 3 } : undefined,
        target: c.mine.target_filter && managed.exists ? { text: managed.text, path: managed.path } : undefined,
      });
      pendingCheck();
      tasks = mined.tasks;
      minerName = mined.miner;
      if (mined.stats?.failed)
        o.warn(
          `the model could not mine ${mined.stats.failed} of ${mined.stats.sessions} sessions (see the warnings above)`,
        );
      if (pinnedTasks)
        writeTasksFile(pinnedTasks, {
          project,
          transcript_source: mined.miner,
          n_sessions: nSessions,
          target_skill_path: managed.path,
          reviewed: false,
          tasks,
        });
    }
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
    const report = stage(
      o,
      dir,
      nightNo,
      project,
      started,
      choice.describe,
      nSessions,
      minerName,
      tasks,
      results,
      skipped,
      models,
    );
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

function isSim(choice: ReturnType<typeof chooseModels>): boolean {
  const m = choice.config.model;
  return !choice.handoff && [m.target, m.optimizer, m.judge].every((r) => r.backend === 'sim');
}

/** The night's sessions: harvested now, or (a handoff night's later rounds) as the first round pinned them. */
function harvestDigests(o: NightOptions, handoffDir: string | undefined): SessionDigest[] {
  const pin = handoffDir && path.join(handoffDir, 'digests.jsonl');
  if (pin && fs.existsSync(pin)) {
    try {
      return readDigests(pin);
    } catch {
      // a damaged pin is harvested again
    }
  }
  const result = harvest(o.harvest);
  o.say(`harvest: ${result.digests.length} sessions (${o.harvest.windowText})`);
  if (pin) writeDigests(pin, result.digests);
  return result.digests;
}

function stage(
  o: NightOptions,
  dir: string,
  nightNo: number,
  project: string,
  started: Date,
  backend: string,
  nSessions: number,
  miner: NightReport['miner'],
  tasks: TaskRecord[],
  results: { doc: LiveDocument; result: Consolidation }[],
  skipped: NightReport['skipped'],
  models: NightModels,
): NightReport {
  const c = o.loaded.config;
  const totals = models.stack.ledger.totals();
  const proposals: Proposal[] = [];
  const diffs: string[] = [];
  const documents: DocumentReport[] = results.map(({ doc, result }) => {
    const { candidateText: _c, proposedText, ...rest } = result;
    const staged = result.accepted && proposedText !== doc.text;
    if (staged) {
      proposals.push({
        name: doc.name,
        kind: doc.kind,
        livePath: doc.path,
        liveRealpath: doc.realpath,
        liveSha256: doc.sha256,
        text: proposedText,
        action: result.action,
        baseline: result.baseline?.gate ?? null,
        candidate: result.candidate?.gate ?? null,
      });
      diffs.push(unifiedDiff(doc.text, proposedText, { before: doc.exists ? doc.path : '/dev/null', after: doc.path }));
    }
    return { ...rest, kind: doc.kind, live_path: doc.path, staged };
  });
  const report: NightReport = {
    night: nightNo,
    project,
    started_at: started.toISOString(),
    ended_at: new Date().toISOString(),
    backend,
    window: o.harvest.windowText,
    n_sessions: nSessions,
    miner,
    n_tasks: tasks.length,
    splits: splitCounts(tasks),
    gate_metric: c.consolidate.gate ? c.consolidate.gate_metric : 'none (gate off)',
    documents,
    skipped,
    usage: {
      calls: totals.calls,
      input_tokens: totals.inputTokens,
      output_tokens: totals.outputTokens,
      cost_usd: totals.costUsd,
      unpriced_calls: totals.unpricedCalls,
    },
    notes: [],
  };
  writeTasksFile(path.join(dir, 'tasks.json'), {
    project,
    transcript_source: miner,
    n_sessions: nSessions,
    target_skill_path: results[0]?.doc.path ?? '',
    reviewed: false,
    tasks,
  });
  writeJsonAtomic(path.join(dir, 'report.json'), report);
  writeFileAtomic(path.join(dir, 'report.md'), renderReport(report, tasks));
  if (diffs.length) writeFileAtomic(path.join(dir, 'diff.patch'), diffs.join('\n'));
  writeManifest(dir, { night: nightNo, project, created_at: new Date().toISOString(), backend }, proposals);
  return report;
}
