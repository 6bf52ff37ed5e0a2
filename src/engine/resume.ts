/**
 * How a run resumes: the state as of the last commit, read back from the run directory. The
 * commit point (`runtime_state.json`, or its rebuild from `history.json`) names the step, scores,
 * origins and schedule; the skills are read from their own files; the step buffer is rebuilt from
 * the epoch's digests and the pool from its lineage. Everything else a resumed run needs comes
 * from the journals as it goes: model calls from `calls.jsonl` and the response cache, rollouts
 * from the score cache, epoch boundaries from their result files (docs/architecture.md, "Resume").
 */
import fs from 'node:fs';
import path from 'node:path';
import type { StepBufferEntry } from '../protocol/optimizer.ts';
import { readJson } from '../run/atomic.ts';
import { INITIAL_ORIGIN, originId } from '../run/origins.ts';
import { type HistoryRecord, isSkipped } from '../run/records.ts';
import { packageHash, type SkillPackage } from '../skill/package/package.ts';
import { readSkillFile } from '../run/skill-files.ts';
import { scoredSkill } from './stages/gate.ts';
import type { RunContext, TrainState } from './context.ts';
import { CandidatePool } from './candidate-pool/candidate-pool.ts';

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
  ctx: Pick<RunContext, 'dir' | 'events' | 'selection' | 'baselineSelection' | 'skillInit' | 'settings'>,
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
  const current = readSkillFile(dir, currentFile);
  if (current === undefined) throw new Error(`cannot resume: ${currentFile} is missing`);
  const best = committedBest(ctx, dir.bestSkill, runtime.best_skill_hash) ?? current;
  // Records of a step that was written but not committed are dropped: that step is redone.
  const history = dir.readHistory().filter((r) => r.step <= last);
  // A rebuilt state does not know the baseline: it is scored again, from the score cache.
  const baseline = runtime.baseline_score ?? (await (ctx.baselineSelection ?? ctx.selection).score(ctx.skillInit)).gate;
  return {
    lastStep: last,
    baselineScore: baseline,
    current: scoredSkill(
      current,
      runtime.current_score ?? baseline,
      runtime.current_origin ?? originId({ kind: 'step', step: last }),
    ),
    best: {
      ...scoredSkill(
        best,
        runtime.best_score ?? runtime.current_score ?? baseline,
        runtime.best_origin ?? INITIAL_ORIGIN,
      ),
      step: runtime.best_step ?? last,
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
function committedBest(ctx: Pick<RunContext, 'dir'>, file: string, hash: string | undefined): SkillPackage | undefined {
  const best = readSkillFile(ctx.dir, file);
  if (hash === undefined || (best !== undefined && packageHash(best) === hash)) return best;
  const candidates = [
    ...listFiles(ctx.dir.path('skills')),
    ...listFiles(ctx.dir.path('steps')).map((d) => path.join(d, 'candidate_skill.md')),
    ...listFiles(ctx.dir.path('slow_update')).map((d) => path.join(d, 'candidate_skill.md')),
  ];
  for (const f of candidates.filter((c) => c.endsWith('.md'))) {
    const t = readSkillFile(ctx.dir, f);
    if (t !== undefined && packageHash(t) === hash) return t;
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
