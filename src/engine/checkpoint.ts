/**
 * The trainer's state on disk: `runtime_state.json` is the commit point of every step and epoch
 * boundary (written last, atomically), so a run killed at any moment resumes from the last
 * complete step. How a resume reads it back is `resume.ts`.
 */
import { packageHash } from '../skill/package/package.ts';
import { writeBestFolder, writeSkillFile } from '../run/skill-files.ts';
import type { RuntimeState } from '../run/records.ts';
import type { RunContext, TrainState } from './context.ts';
import { round } from '../util/round.ts';

export type RunStatus = 'running' | 'finished' | 'failed' | 'stopped';

export function persistState(
  ctx: Pick<RunContext, 'dir' | 'clock'>,
  state: TrainState,
  status: RunStatus = 'running',
): void {
  const { dir } = ctx;
  // runtime_state.json, written last, is the commit point a resume starts from; the files it
  // points to are flushed to disk before it.
  const currentPath = dir.skill(state.lastStep);
  writeSkillFile(dir, currentPath, state.current);
  writeSkillFile(dir, dir.bestSkill, state.best);
  writeBestFolder(dir, state.best);
  dir.writeJson(dir.history, state.history);
  state.pool?.save(dir);
  const runtime: RuntimeState & Record<string, unknown> = {
    last_completed_step: state.lastStep,
    baseline_score: state.baselineScore,
    current_skill_path: currentPath,
    current_score: state.current.score,
    current_origin: state.current.origin,
    best_skill_path: dir.bestSkill,
    best_skill_hash: packageHash(state.best),
    best_score: state.best.score,
    best_step: state.best.step,
    best_origin: state.best.origin,
    scheduler: state.scheduler.state(),
    epoch_boundaries_done: state.boundariesDone,
    elapsed_s: round(ctx.clock.elapsedSeconds(), 1),
    status,
    ...(state.pool ? { pool: state.pool.members.map((m) => m.origin) } : {}),
  };
  dir.writeJson(dir.runtimeState, runtime);
}
