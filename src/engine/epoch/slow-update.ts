/**
 * Momentum at the epoch boundary: the optimizer compares the previous and the current epoch's
 * skill on the same training items and writes guidance into the skill's protected slow-update
 * field (which edits cannot touch). Its result file records the outcome, so a resumed run
 * applies it again instead of redoing it.
 */
import path from 'node:path';
import { readJson } from '../../run/atomic.ts';
import { pad2 } from '../../run/layout.ts';
import { countTokens, skillHash } from '../../skill/document.ts';
import { extractSlowUpdateField, injectEmptySlowUpdateField, replaceSlowUpdateField } from '../../skill/regions.ts';
import { comparePairs, epochEndSkill, savePairs } from './comparison-rollouts.ts';
import type { RunContext, SkillState, TrainState } from '../context.ts';
import { round } from '../context.ts';
import { writeEpochNote } from './note-writer.ts';
import { decide } from '../stages/gate.ts';
import { countCategories } from './comparison-pairs.ts';
import type { ComparisonPair } from '../../protocol/optimizer.ts';
import { scoreOnSelection } from '../stages/selection-eval.ts';

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

function applyStateAfter(state: TrainState, after: StateAfter | undefined): void {
  if (!after) return;
  state.current = after.current;
  state.best = after.best;
}

/** Returns the comparison pairs when it made them (the meta skill uses the same). */
export async function slowUpdate(ctx: RunContext, state: TrainState, epoch: number, epochSkill: string): Promise<ComparisonPair[] | undefined> {
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
  const prevSkill = epochEndSkill(ctx, epoch - 1);
  const cmp = await comparePairs(ctx, prevSkill, epochSkill, epoch, base);
  savePairs(ctx, base, cmp.pairs, cmp.all);
  const counts = countCategories(cmp.pairs);
  const summary = { prev_hard: cmp.prevHard, curr_hard: cmp.currHard, categories: counts };
  const res = await writeEpochNote(ctx.opt, 'slow_update', { prevSkill, currSkill: epochSkill, previous: extractSlowUpdateField(state.current.skill), pairs: cmp.pairs });
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
