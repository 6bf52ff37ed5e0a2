/**
 * The epoch boundary: the slow update (momentum) writes guidance into the skill's protected
 * field from a comparison of this epoch's skill with the previous epoch's on the same training
 * items; the meta skill (optimizer state) writes notes for the optimizer used from the next
 * epoch on. Each part leaves a result file that records its outcome, so a resumed run applies
 * it again instead of redoing it.
 */
import path from 'node:path';
import type { Item, Trajectory } from '../envs/types.ts';
import { readJson } from '../run/atomic.ts';
import { pad2 } from '../run/layout.ts';
import { countTokens, skillHash } from '../skill/document.ts';
import { extractSlowUpdateField, injectEmptySlowUpdateField, replaceSlowUpdateField } from '../skill/regions.ts';
import { Rng } from '../util/random.ts';
import type { RunContext, SkillState, TrainState } from './context.ts';
import { round } from './context.ts';
import { sampleTrain } from './data.ts';
import { decide } from './gate.ts';
import { writeMetaSkill } from './meta-skill.ts';
import { buildPairs, countCategories, keepByPolicy, slimPairs } from './pairs.ts';
import type { ComparisonPair } from './protocol.ts';
import { rollout } from './rollout.ts';
import { computeScore } from './scoring.ts';
import { scoreOnSelection } from './selection.ts';
import { writeSlowUpdate } from './slow-update.ts';
import { persistState } from './state.ts';

interface StateAfter {
  current: SkillState;
  best: SkillState & { step: number };
}

interface SlowResult {
  action: string;
  epoch: number;
  state_after?: StateAfter;
  [k: string]: unknown;
}

const present = (ts: (Trajectory | undefined)[]) => ts.filter((t): t is Trajectory => t !== undefined);

/** The same training items under two skills, paired; `changed` tops up until it has enough pairs. */
export async function comparePairs(ctx: RunContext, prevSkill: string, currSkill: string, epoch: number, base: string) {
  const n = ctx.config.optimizer.slow_update_samples;
  const seed = ctx.config.train.seed + epoch * 2000;
  const items = sampleTrain(ctx.splits.train, n, seed);
  const run = (skill: string, list: Item[], sub: string) =>
    rollout({ env: ctx.env, target: ctx.models.target, judge: ctx.models.judge, skill, items: list, limit: ctx.rolloutLimit, cache: ctx.scores, seed, dir: path.join(base, sub) });
  const [prev, curr] = await Promise.all([run(prevSkill, items, 'rollout_prev'), run(currSkill, items, 'rollout_curr')]);
  const all = buildPairs(items, prev.trajectories, curr.trajectories);
  let kept = keepByPolicy(all, ctx.pairPolicy);
  if (ctx.pairPolicy === 'changed' && kept.length < n) {
    const used = new Set(items.map((i) => i.id));
    const rest = new Rng(seed).shuffle(ctx.splits.train).filter((i) => !used.has(i.id));
    const chunk = Math.max(1, ctx.config.env.workers);
    for (let i = 0; i < rest.length && kept.length < n; i += chunk) {
      const more = rest.slice(i, i + chunk);
      const [p, c] = await Promise.all([run(prevSkill, more, 'rollout_prev/topup'), run(currSkill, more, 'rollout_curr/topup')]);
      const extra = buildPairs(more, p.trajectories, c.trajectories);
      all.push(...extra);
      kept = [...kept, ...keepByPolicy(extra, 'changed')];
    }
    kept = kept.slice(0, n);
  }
  return {
    pairs: kept,
    all,
    prevHard: computeScore(present(prev.trajectories)).hard,
    currHard: computeScore(present(curr.trajectories)).hard,
  };
}

function savePairs(ctx: RunContext, base: string, pairs: ComparisonPair[], all: ComparisonPair[]): void {
  ctx.dir.writeJson(path.join(base, 'comparison_pairs.json'), slimPairs(pairs));
  if (ctx.pairPolicy !== 'mixed') ctx.dir.writeJson(path.join(base, 'comparison_pairs_all.json'), slimPairs(all));
}

function applyStateAfter(state: TrainState, after: StateAfter | undefined): void {
  if (!after) return;
  state.current = after.current;
  state.best = after.best;
}

function lastStepOfEpoch(ctx: RunContext, epoch: number): number {
  return epoch * ctx.plan.stepsPerEpoch;
}

/** Returns the comparison pairs when it made them (the meta skill uses the same). */
async function slowUpdate(ctx: RunContext, state: TrainState, epoch: number, epochSkill: string): Promise<ComparisonPair[] | undefined> {
  const base = ctx.dir.slowUpdate(epoch);
  const markerFile = path.join(base, 'slow_result.json');
  const done = readJson<SlowResult>(markerFile);
  if (done) {
    applyStateAfter(state, done.state_after);
    return undefined;
  }
  const started = performance.now();
  const origin = `slow_update_epoch_${pad2(epoch)}`;
  const write = (result: SlowResult) => {
    ctx.dir.writeJson(markerFile, { ...result, time_s: round((performance.now() - started) / 1000, 1) });
    applyStateAfter(state, result.state_after);
    ctx.events.emit({ type: 'epoch_boundary', epoch, kind: 'slow_update', action: result.action, detail: result.detail as string | undefined });
  };
  if (epoch === 1) {
    // Nothing to compare yet: make room for the guidance. Empty markers do not change what the target reads.
    const current = { ...state.current, skill: injectEmptySlowUpdateField(state.current.skill), origin: 'slow_update_placeholder_epoch_01' };
    write({ action: 'inject_placeholder', epoch, state_after: { current, best: state.best } });
    return undefined;
  }
  ctx.events.emit({ type: 'stage_started', step: state.lastStep, epoch, stage: 'slow_update', detail: `epoch ${epoch - 1} vs ${epoch}` });
  const prevSkill = ctx.dir.readText(ctx.dir.skill(lastStepOfEpoch(ctx, epoch - 1))) ?? ctx.skillInit;
  const cmp = await comparePairs(ctx, prevSkill, epochSkill, epoch, base);
  savePairs(ctx, base, cmp.pairs, cmp.all);
  const counts = countCategories(cmp.pairs);
  const summary = { prev_hard: cmp.prevHard, curr_hard: cmp.currHard, categories: counts };
  const res = await writeSlowUpdate(ctx.opt, { prevSkill, currSkill: epochSkill, guidance: extractSlowUpdateField(state.current.skill), pairs: cmp.pairs });
  if (!res) {
    write({ action: 'no_content', epoch, ...summary, detail: 'no guidance written' });
    return cmp.pairs;
  }
  const candidate = replaceSlowUpdateField(state.current.skill, res.content);
  ctx.dir.writeText(path.join(base, 'candidate_skill.md'), candidate);
  const tokens = countTokens(candidate);
  if (ctx.maxSkillTokens > 0 && tokens > ctx.maxSkillTokens) {
    write({ action: 'over_length_limit', epoch, reasoning: res.reasoning, slow_update_content: res.content, ...summary, detail: `${tokens} tokens, over optimizer.max_skill_tokens=${ctx.maxSkillTokens}` });
    return cmp.pairs;
  }
  // As in the original, this switch gates the slow update even when the step gate is off.
  const gated = ctx.config.optimizer.slow_update_gate_with_selection;
  const sel = await scoreOnSelection(ctx, candidate, {
    dir: path.join(base, 'selection_eval'),
    bar: gated && ctx.config.evaluation.gate_early_stop ? state.current.score : undefined,
    currentSkill: state.current.skill,
  });
  const step = state.lastStep;
  const before = { currentScore: state.current.score, bestScore: state.best.score, bestStep: state.best.step };
  let after: StateAfter = { current: state.current, best: state.best };
  let action: string;
  if (gated) {
    const d = sel.complete ? decide(sel.gate, before, step) : ({ action: 'reject', ...before } as const);
    action = d.action;
    if (d.action !== 'reject') {
      const current = { skill: candidate, score: d.currentScore, origin };
      after = { current, best: d.bestStep === step && d.action === 'accept_new_best' ? { ...current, step } : state.best };
    }
  } else {
    // Force mode: the guidance always goes in, and the current score is measured rather than
    // assumed. The best skill changes only if the new one is validated as strictly better.
    action = 'force_accept';
    const current = { skill: candidate, score: sel.gate, origin };
    after = { current, best: sel.gate > state.best.score ? { ...current, step } : state.best };
  }
  write({
    action,
    epoch,
    reasoning: res.reasoning,
    slow_update_content: res.content,
    ...summary,
    candidate_hash: skillHash(candidate),
    selection_hard: sel.hard,
    selection_soft: sel.soft,
    selection_gate_score: sel.gate,
    selection_rollouts_used: sel.used,
    state_after: after,
    detail: `regressed=${counts.regressed} improved=${counts.improved} selection=${sel.gate.toFixed(4)}`,
  });
  return cmp.pairs;
}

/** The optimizer notes in force for `epoch`: the latest ones written at an earlier boundary. */
export function activeMetaSkill(ctx: RunContext, epoch: number): string {
  if (!ctx.config.optimizer.use_meta_skill) return '';
  for (let e = epoch - 1; e >= 1; e--) {
    const r = readJson<{ meta_skill_content?: string }>(ctx.dir.metaSkill(e, 'meta_skill_result.json'));
    if (r?.meta_skill_content?.trim()) return r.meta_skill_content.trim();
  }
  return '';
}

async function metaSkill(ctx: RunContext, epoch: number, epochSkill: string, slowPairs: ComparisonPair[] | undefined): Promise<void> {
  const file = ctx.dir.metaSkill(epoch, 'meta_skill_result.json');
  if (readJson(file)) return;
  const started = performance.now();
  const write = (result: Record<string, unknown>) => {
    ctx.dir.writeJson(file, { ...result, time_s: round((performance.now() - started) / 1000, 1) });
    ctx.events.emit({ type: 'epoch_boundary', epoch, kind: 'meta_skill', action: String(result.action) });
  };
  if (epoch === 1) {
    write({ action: 'skip_first_epoch', epoch });
    return;
  }
  const prevSkill = ctx.dir.readText(ctx.dir.skill(lastStepOfEpoch(ctx, epoch - 1))) ?? ctx.skillInit;
  // The slow update's comparison when it made one; else the same comparison (on a resume, from
  // the score cache, so at no cost).
  let pairs = slowPairs;
  if (!pairs) {
    const cmp = await comparePairs(ctx, prevSkill, epochSkill, epoch, ctx.dir.metaSkill(epoch));
    if (!ctx.config.optimizer.use_slow_update) savePairs(ctx, ctx.dir.metaSkill(epoch), cmp.pairs, cmp.all);
    pairs = cmp.pairs;
  }
  const res = await writeMetaSkill(ctx.opt, { prevSkill, currSkill: epochSkill, previous: activeMetaSkill(ctx, epoch), pairs });
  write(res ? { action: 'write_meta_skill', reasoning: res.reasoning, meta_skill_content: res.content } : { action: 'no_content' });
}

export async function epochBoundary(ctx: RunContext, state: TrainState, epoch: number): Promise<void> {
  if (state.boundariesDone >= epoch) return;
  const opt = ctx.config.optimizer;
  // The epoch's last-step skill, before this boundary changes it.
  const epochFile = ctx.dir.path('skills', `epoch_${pad2(epoch)}_last_step.md`);
  const saved = ctx.dir.readText(epochFile);
  const epochSkill = saved ?? state.current.skill;
  if (saved === undefined) ctx.dir.writeText(epochFile, epochSkill);
  const pairs = opt.use_slow_update ? await slowUpdate(ctx, state, epoch, epochSkill) : undefined;
  if (opt.use_meta_skill) await metaSkill(ctx, epoch, epochSkill, pairs);
  state.boundariesDone = epoch;
  persistState(ctx, state);
}
