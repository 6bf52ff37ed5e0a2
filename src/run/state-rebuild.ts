/**
 * `runtime_state.json` rebuilt from the rest of a run directory, for when it is unreadable:
 * `history.json` holds every committed step's record (scores, origins, the learning-rate budget
 * used), and each skill the state points to is a file of its own. The state is rebuilt as of
 * the last step record, before its epoch's boundary: an epoch boundary redone finds its
 * recorded results and applies them again, so nothing is paid twice.
 */
import fs from 'node:fs';
import { UserError } from '../errors.ts';
import { packageHash } from '../skill/package/package.ts';
import { readSkillFile } from './skill-files.ts';
import { HistoryRecordSchema, type HistoryRecord, type RuntimeState } from './records.ts';
import { INITIAL_ORIGIN, parseOrigin } from './origins.ts';

/** What a rebuild reads of a run directory (`RunDir` is one). */
export interface RunFiles {
  readonly runtimeState: string;
  readonly history: string;
  skill(step: number): string;
  step(step: number, file: string): string;
  slowUpdate(epoch: number, file: string): string;
  readText(file: string): string | undefined;
  path(...parts: string[]): string;
  readHistory(): HistoryRecord[];
}

/** The identity of the skill stored at `file` (a package's with its files). */
function storedHash(dir: RunFiles, file: string): string {
  const pkg = readSkillFile(dir, file);
  if (!pkg) throw new Error(`${file} is missing`);
  return packageHash(pkg);
}

/** The file holding the skill that an origin names, as the trainer writes it. */
function skillOfOrigin(dir: RunFiles, origin: string): string | undefined {
  const o = parseOrigin(origin);
  if (o?.kind === 'initial') return dir.skill(0);
  if (o?.kind === 'step') return dir.step(o.step, 'candidate_skill.md');
  if (o?.kind === 'slow_update') return dir.slowUpdate(o.epoch, 'candidate_skill.md');
  return undefined;
}

/** Wall time of the committed steps, from their step records (the baseline's is not known). */
function stepSeconds(dir: RunFiles, history: HistoryRecord[]): number {
  let total = 0;
  for (const r of history) {
    const record = dir.readText(dir.step(r.step, 'step_record.json'));
    if (record === undefined) continue;
    try {
      const wall = (JSON.parse(record) as { wall_time_s?: unknown }).wall_time_s;
      if (typeof wall === 'number') total += wall;
    } catch {
      // a step record is an artifact: without it the time is a little short
    }
  }
  return Math.round(total * 10) / 10;
}

/**
 * The state a run resumes from, rebuilt from `history.json` and the skill files, or a
 * `UserError` that says what is missing. Scores the history does not hold (the baseline, and
 * the scores of a run with no step yet) are left out: the trainer measures them again, from
 * the score cache.
 */
export function rebuildRuntimeState(dir: RunFiles, problem: string): RuntimeState {
  const refuse = (why: string) =>
    new UserError(
      `${dir.runtimeState} ${problem}, and the run cannot be rebuilt from its other files: ${why}. Restore the file, or move the run directory away to start over`,
    );
  let history: HistoryRecord[];
  try {
    history = dir.readHistory();
  } catch (err) {
    throw refuse((err as Error).message);
  }
  const last = history.at(-1);
  if (!last) {
    if (!fs.existsSync(dir.skill(0)))
      throw refuse(`neither ${dir.history} nor ${dir.skill(0)} exists (the run has not finished its baseline)`);
    return {
      last_completed_step: 0,
      current_skill_path: dir.skill(0),
      current_origin: INITIAL_ORIGIN,
      best_skill_path: dir.skill(0),
      best_skill_hash: storedHash(dir, dir.skill(0)),
      best_step: 0,
      best_origin: 'initial_skill',
      scheduler: { current_step: 0 },
      epoch_boundaries_done: 0,
      status: 'running',
    };
  }
  const { step, epoch } = last;
  if (!fs.existsSync(dir.skill(step))) throw refuse(`${dir.skill(step)}, the skill after step ${step}, is missing`);
  if (
    typeof last.current_score !== 'number' ||
    typeof last.best_score !== 'number' ||
    last.best_step === undefined ||
    !last.current_origin ||
    !last.best_origin
  ) {
    throw refuse(
      `the record of step ${step} in ${dir.history} lacks current_score, best_score, best_step, current_origin or best_origin`,
    );
  }
  const bestFile = skillOfOrigin(dir, last.best_origin);
  if (!bestFile || !fs.existsSync(bestFile))
    throw refuse(
      `the best skill (origin '${last.best_origin}') is not in the run directory${bestFile ? ` (${bestFile})` : ''}`,
    );
  // The scheduler moves once per step that drew a budget from it (autonomous budgets come from the optimizer).
  const scheduled = history.filter(
    (r) => typeof r.edit_budget === 'number' && r.lr_control_mode !== 'autonomous',
  ).length;
  return {
    last_completed_step: step,
    current_skill_path: dir.skill(step),
    current_score: last.current_score,
    current_origin: last.current_origin,
    best_skill_path: bestFile,
    best_skill_hash: storedHash(dir, bestFile),
    best_score: last.best_score,
    best_step: last.best_step,
    best_origin: last.best_origin,
    scheduler: { current_step: scheduled },
    // This epoch's boundary, if it ran, is redone from its recorded results.
    epoch_boundaries_done: epoch - 1,
    elapsed_s: stepSeconds(dir, history),
    status: 'running',
  };
}

/** A `history.json` that could not be read, and the records that replace it. */
export interface HistoryRepair {
  /** What was wrong with the file, in words. */
  problem: string;
  records: HistoryRecord[];
}

/**
 * For a run to be resumed: when its `history.json` is unreadable or invalid, the history rebuilt
 * from the steps' own records (`steps/step_NNNN/step_record.json` holds each committed step's
 * record, with its timings); undefined when the history is fine. Reads only. A history that
 * cannot be rebuilt is a `UserError` naming the files and what to move aside.
 */
export function historyRepair(dir: RunFiles & { readonly root: string }, lastStep: number): HistoryRepair | undefined {
  let problem: string;
  try {
    dir.readHistory();
    return undefined;
  } catch (err) {
    problem = (err as Error).message.replace(`cannot read ${dir.history}: `, '').replace(`${dir.history} is `, '');
  }
  const refuse = (why: string) =>
    new UserError(
      `${dir.history} is unreadable (${problem}), and ${why}, so the run cannot be resumed. Restore the file, or move the run directory aside (mv ${dir.root} ${dir.root}.broken) to start again`,
    );
  const records: HistoryRecord[] = [];
  for (let step = 1; step <= lastStep; step++) {
    const file = dir.step(step, 'step_record.json');
    const text = dir.readText(file);
    if (text === undefined) throw refuse(`${file}, which would rebuild it, is missing`);
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      throw refuse(`${file}, which would rebuild it, is not valid JSON`);
    }
    // The step's history record is the step record without its timings.
    const { timing: _timing, wall_time_s: _wall, ...fields } = record as Record<string, unknown>;
    const parsed = HistoryRecordSchema.safeParse(fields);
    if (!parsed.success || parsed.data.step !== step)
      throw refuse(`${file}, which would rebuild it, is not the record of step ${step}`);
    records.push(fields as HistoryRecord);
  }
  return { problem, records };
}
