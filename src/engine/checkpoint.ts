/**
 * The trainer's state on disk: `runtime_state.json` is the commit point of every step and epoch
 * boundary (written last, atomically), so a run killed at any moment resumes from the last
 * complete step. Everything else a resume needs is rebuilt from the run's own files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readJson } from '../run/atomic.ts';
import { skillHash } from '../skill/document.ts';
import { isSkipped, type HistoryRecord, type RuntimeState } from '../run/records.ts';
import type { StepBufferEntry } from '../protocol/optimizer.ts';
import { round, type RunContext, type TrainState } from './context.ts';
import { CandidatePool } from './pool/candidate-pool.ts';
import { INITIAL_ORIGIN, originId } from '../run/origins.ts';

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
  dir.writeText(currentPath, state.current.skill);
  dir.writeText(dir.bestSkill, state.best.skill);
  dir.writeJson(dir.history, state.history);
  state.pool?.save(dir);
  const runtime: RuntimeState & Record<string, unknown> = {
    last_completed_step: state.lastStep,
    baseline_score: state.baselineScore,
    current_skill_path: currentPath,
    current_score: state.current.score,
    current_origin: state.current.origin,
    best_skill_path: dir.bestSkill,
    best_skill_hash: skillHash(state.best.skill),
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

export interface Resumed {
  lastStep: number;
  baselineScore: number;
  current: TrainState['current'];
  best: TrainState['best'];
  scheduler: { current_step: number };
  boundariesDone: number;
  history: HistoryRecord[];
  elapsed: number;
  pool?: CandidatePool;
}

/**
 * The state of an interrupted run in `ctx.dir`, or undefined for a new run. Skills are read from
 * the run directory itself (the paths in the state may name where the run was before it was
 * moved). A state that had to be rebuilt is announced.
 */
export async function readResumeState(
  ctx: Pick<RunContext, 'dir' | 'events' | 'selection' | 'skillInit' | 'settings'>,
): Promise<Resumed | undefined> {
  const { dir } = ctx;
  const problem = dir.runtimeStateProblem();
  const runtime = dir.readRuntimeState();
  if (!runtime) return undefined;
  const last = runtime.last_completed_step;
  if (problem)
    ctx.events.warn(
      `${dir.runtimeState} ${problem}: rebuilt from ${dir.history} and the skill files; resuming after step ${last}`,
    );
  const currentFile = dir.skill(last);
  const current = dir.readText(currentFile);
  if (current === undefined) throw new Error(`cannot resume: ${currentFile} is missing`);
  const best = committedBest(ctx, dir.bestSkill, runtime.best_skill_hash) ?? current;
  // Records of a step that was written but not committed are dropped: that step is redone.
  const history = dir.readHistory().filter((r) => r.step <= last);
  // A rebuilt state does not know the baseline: it is scored again, from the score cache.
  const baseline = runtime.baseline_score ?? (await ctx.selection.score(ctx.skillInit)).gate;
  return {
    lastStep: last,
    baselineScore: baseline,
    current: {
      skill: current,
      score: runtime.current_score ?? baseline,
      origin: runtime.current_origin ?? originId({ kind: 'step', step: last }),
    },
    best: {
      skill: best,
      score: runtime.best_score ?? runtime.current_score ?? baseline,
      step: runtime.best_step ?? last,
      origin: runtime.best_origin ?? INITIAL_ORIGIN,
    },
    scheduler: runtime.scheduler ?? { current_step: last },
    boundariesDone: runtime.epoch_boundaries_done ?? 0,
    history,
    elapsed: runtime.elapsed_s ?? 0,
    ...(ctx.settings.pool.size ? { pool: CandidatePool.load(dir, ctx.settings.pool.size, runtime.pool, last) } : {}),
  };
}

/** The step buffer of an epoch, rebuilt from the digests of its finished steps. */
export function restoreStepBuffer(
  ctx: Pick<RunContext, 'dir'>,
  history: HistoryRecord[],
  epoch: number,
): StepBufferEntry[] {
  const out: StepBufferEntry[] = [];
  for (const r of history) {
    if (r.epoch !== epoch || isSkipped(r.action)) continue;
    const entry = readJson<StepBufferEntry>(ctx.dir.step(r.step, 'trajectory_digest.json'));
    if (entry) out.push(entry);
  }
  return out;
}

/**
 * The best skill as of the last commit. `best_skill.md` is written just before the commit; after
 * a crash between the two it may hold the next step's uncommitted best, so the committed one is
 * found by its hash among the run's skill files.
 */
function committedBest(ctx: Pick<RunContext, 'dir'>, file: string, hash: string | undefined): string | undefined {
  const text = ctx.dir.readText(file);
  if (hash === undefined || (text !== undefined && skillHash(text) === hash)) return text;
  const candidates = [
    ...listFiles(ctx.dir.path('skills')),
    ...listFiles(ctx.dir.path('steps')).map((d) => path.join(d, 'candidate_skill.md')),
    ...listFiles(ctx.dir.path('slow_update')).map((d) => path.join(d, 'candidate_skill.md')),
  ];
  for (const f of candidates) {
    const t = ctx.dir.readText(f);
    if (t !== undefined && skillHash(t) === hash) return t;
  }
  throw new Error(`cannot resume: the best skill of the last completed step (hash ${hash}) is not in ${ctx.dir.root}`);
}

function listFiles(dir: string): string[] {
  try {
    return fs.readdirSync(dir).map((f) => path.join(dir, f));
  } catch {
    return [];
  }
}
