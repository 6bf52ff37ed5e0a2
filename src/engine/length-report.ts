/**
 * Score against length: every skill the run took in (the initial skill, each accepted step, each
 * slow update taken), with its selection score and its length, written to
 * `score_vs_length.json` at the end of training. It shows what each gain cost in length, and
 * what `evaluation.prefer_shorter_within` bought.
 */
import { readJson } from '../run/atomic.ts';
import { isAccepted } from '../run/records.ts';
import { countTokens } from '../skill/document.ts';
import type { RunContext, TrainState } from './context.ts';
import type { SkillStates } from './stages/gate.ts';
import { INITIAL_ORIGIN } from '../run/origins.ts';

export interface LengthPoint {
  origin: string;
  /** The step after which it was the current skill (0: the start). */
  step: number;
  /** Selection score on the gate metric. */
  score: number;
  tokens: number;
  chars: number;
  /** It is the run's best skill. */
  best: boolean;
}

type ReportContext = Pick<RunContext, 'dir' | 'settings' | 'skillInit'>;

export function scoreVsLength(ctx: ReportContext, state: TrainState): LengthPoint[] {
  const points: Omit<LengthPoint, 'best'>[] = [];
  const add = (origin: string, step: number, score: number, skill: string) =>
    points.push({ origin, step, score, tokens: countTokens(skill), chars: skill.length });
  add(INITIAL_ORIGIN, 0, state.baselineScore, ctx.skillInit.skill);
  let epochSeen = 0;
  for (const r of state.history) {
    // A slow update at the boundary before this record's epoch.
    for (; epochSeen < r.epoch - 1; epochSeen++) addSlowUpdate(ctx, epochSeen + 1, r.step - 1, add);
    if (!isAccepted(r.action)) continue;
    const skill = ctx.dir.readText(ctx.dir.step(r.step, 'candidate_skill.md'));
    if (skill !== undefined && r.current_score !== undefined)
      add(r.current_origin ?? `step ${r.step}`, r.step, r.current_score, skill);
  }
  for (; epochSeen < state.boundariesDone; epochSeen++) addSlowUpdate(ctx, epochSeen + 1, state.lastStep, add);
  return points.map((p) => ({ ...p, best: p.origin === state.best.origin }));
}

function addSlowUpdate(
  ctx: ReportContext,
  epoch: number,
  step: number,
  add: (origin: string, step: number, score: number, skill: string) => void,
): void {
  const result = readJson<{ action?: string; state_after?: SkillStates }>(
    ctx.dir.slowUpdate(epoch, 'slow_result.json'),
  );
  const current = result?.state_after?.current;
  if (!result?.action || !isAccepted(result.action) || !current) return;
  add(current.origin, step, current.score, current.skill);
}

export function lengthTable(points: LengthPoint[]): string {
  const rows = points.map(
    (p) =>
      `    ${p.origin.padEnd(28)} step ${String(p.step).padStart(3)}  score=${p.score.toFixed(4)}  tokens=${String(p.tokens).padStart(5)}${p.best ? '  (best)' : ''}`,
  );
  return ['  score against length of every skill taken in:', ...rows].join('\n');
}
