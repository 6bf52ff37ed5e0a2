/**
 * Mining: sessions into tasks. The model miner when one is given (sessions it could not mine
 * give no task), else or when it finds nothing the heuristic miner; then duplicates merged, the
 * tasks about the target skill first (when a night trains one), at most `maxTasks`, and the
 * splits by hash.
 */
import type { OptimizerContext } from '../../engine/optimizer-model/ask.ts';
import type { SessionDigest } from '../harvest/digest.ts';
import type { TaskRecord } from '../tasks/task.ts';
import { dedupTasks } from './dedup.ts';
import { mineHeuristic } from './heuristic.ts';
import { mineWithModel, type MinerStats } from './llm.ts';
import { assignSplits } from './splits.ts';
import { filterTasksForSkill } from './target-filter.ts';

export interface MineOptions {
  maxTasks: number;
  val: number;
  test: number;
  seed: number;
  /** The model miner: the optimizer, and how many sessions it may read. */
  model?: { ctx: OptimizerContext; maxSessions: number };
  /** The skill the night trains: its tasks first. */
  target?: { text: string; path: string };
}

export interface Mined {
  tasks: TaskRecord[];
  miner: 'model' | 'heuristic';
  stats?: MinerStats;
}

export async function mine(digests: SessionDigest[], o: MineOptions): Promise<Mined> {
  const filtering = Boolean(o.target?.text.trim());
  // With a target to filter to, more candidates are mined than kept.
  const candidates = filtering ? o.maxTasks * 3 : o.maxTasks;
  let tasks: TaskRecord[] = [];
  let miner: Mined['miner'] = 'heuristic';
  let stats: MinerStats | undefined;
  if (o.model) {
    const got = await mineWithModel(o.model.ctx, digests, { maxSessions: o.model.maxSessions, maxTasks: candidates });
    stats = got.stats;
    if (got.tasks.length) {
      tasks = got.tasks;
      miner = 'model';
    }
  }
  // Every session: duplicates are merged before the cap, so that they do not take its places.
  if (tasks.length === 0) tasks = mineHeuristic(digests, Number.POSITIVE_INFINITY);
  tasks = dedupTasks(tasks);
  if (filtering) tasks = filterTasksForSkill(tasks, o.target!.text, o.target!.path);
  tasks = assignSplits(tasks.slice(0, o.maxTasks), { val: o.val, test: o.test, seed: o.seed });
  return { tasks, miner, stats };
}
