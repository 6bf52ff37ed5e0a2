/**
 * The tasks a night learns from: a reviewed tasks file when one is given, else the user's
 * sessions harvested and mined. A handoff night pins both the sessions and the tasks in its
 * handoff folder, so that every round of answers is asked the same prompts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../errors.ts';
import type { LiveDocument } from '../documents/documents.ts';
import type { SessionDigest } from '../harvest/digest.ts';
import { readDigests, writeDigests } from '../harvest/digests-file.ts';
import { harvest } from '../harvest/harvest.ts';
import { mine } from '../mine/mine.ts';
import type { NightReport } from '../staging/report.ts';
import { readTasksFile, writeTasksFile } from '../tasks/tasks-file.ts';
import type { TaskRecord } from '../tasks/task.ts';
import type { Evidence } from './evidence.ts';
import type { chooseModels, NightModels } from './models.ts';
import type { NightOptions } from './night-options.ts';

export interface NightTasks {
  tasks: TaskRecord[];
  nSessions: number;
  miner: NightReport['miner'];
}

export interface NightTasksContext {
  o: NightOptions;
  choice: ReturnType<typeof chooseModels>;
  models: NightModels;
  project: string;
  /** The live documents; the first is the managed skill. */
  docs: LiveDocument[];
  evidence: Evidence;
  handoffDir: string | undefined;
  /** Throws when the handoff waits for answers (called once the miner has asked its prompts). */
  pendingCheck: () => void;
}

export async function nightTasks(x: NightTasksContext): Promise<NightTasks> {
  const { o, evidence, handoffDir } = x;
  const c = o.loaded.config;
  const pinnedTasks = handoffDir && path.join(handoffDir, 'tasks.json');
  const split = { val: c.mine.val_fraction, test: c.mine.test_fraction, seed: c.mine.seed };
  if (o.tasksFile) {
    const loaded = readTasksFile(o.tasksFile, split);
    for (const w of loaded.warnings) o.warn(w);
    if (!loaded.reviewed && !isSim(x.choice)) {
      throw new UserError(
        `${o.tasksFile} is not marked reviewed: its tasks would go to the models as they are. Read them, remove what must not be sent, set "reviewed": true, and run again`,
      );
    }
    return { tasks: loaded.tasks, nSessions: loaded.n_sessions, miner: 'tasks file' };
  }
  if (pinnedTasks && fs.existsSync(pinnedTasks)) {
    const loaded = readTasksFile(pinnedTasks, split);
    return {
      tasks: loaded.tasks,
      nSessions: loaded.n_sessions,
      miner: loaded.transcript_source === 'model' ? 'model' : 'heuristic',
    };
  }
  const digests = harvestDigests(o, handoffDir);
  for (const d of digests)
    evidence.log('harvest', 'session', {
      source: d.source,
      session_id: d.session_id,
      prompts: d.user_prompts.slice(0, 6).map((p) => p.slice(0, 200)),
      final: (d.assistant_finals.at(-1) ?? '').slice(0, 300),
      feedback: d.feedback_signals,
    });
  const managed = x.docs[0]!;
  const mined = await mine(digests, {
    maxTasks: c.mine.max_tasks,
    ...split,
    model: c.mine.miner === 'model' ? { ctx: x.models.opt, maxSessions: c.mine.max_tasks * 3 } : undefined,
    target: c.mine.target_filter && managed.exists ? { text: managed.text, path: managed.path } : undefined,
  });
  x.pendingCheck();
  if (mined.stats?.failed)
    o.warn(
      `the model could not mine ${mined.stats.failed} of ${mined.stats.sessions} sessions (see the warnings above)`,
    );
  if (pinnedTasks)
    writeTasksFile(pinnedTasks, {
      project: x.project,
      transcript_source: mined.miner,
      n_sessions: digests.length,
      target_skill_path: managed.path,
      reviewed: false,
      tasks: mined.tasks,
    });
  return { tasks: mined.tasks, nSessions: digests.length, miner: mined.miner };
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
