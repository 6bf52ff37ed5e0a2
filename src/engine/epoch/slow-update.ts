/**
 * Momentum at the epoch boundary: the optimizer compares the previous and the current epoch's
 * skill on the same training items and writes guidance into the skill's protected slow-update
 * field (which edits cannot touch). Its result file records the outcome, so a resumed run
 * applies it again instead of redoing it.
 */
import path from 'node:path';
import { readJson } from '../../run/atomic.ts';
import type { SlowUpdateAction } from '../../run/events.ts';
import { countTokens } from '../../skill/document.ts';
import { packageHash, withSkill, type SkillPackage } from '../../skill/package/package.ts';
import { writeSkillFile } from '../../run/skill-files.ts';
import { extractSlowUpdateField, injectEmptySlowUpdateField, replaceSlowUpdateField } from '../../skill/regions.ts';
import type { ComparisonPair } from '../../protocol/optimizer.ts';
import type { RunContext, TrainState } from '../context.ts';
import { round } from '../../util/round.ts';
import { applyDecision, scoredSkill, type SkillStates } from '../stages/gate.ts';
import { gateCandidate } from '../stages/gate-evaluation.ts';
import { countCategories } from './comparison-pairs.ts';
import { comparePairs, epochEndSkill, savePairs } from './comparison-rollouts.ts';
import { writeEpochNote } from './note-writer.ts';
import { originId } from '../../run/origins.ts';

interface SlowResult {
  action: SlowUpdateAction;
  epoch: number;
  state_after?: SkillStates;
  detail?: string;
  [k: string]: unknown;
}

function applyStateAfter(state: TrainState, after: SkillStates | undefined): void {
  if (!after) return;
  state.current = after.current;
  state.best = after.best;
}

type SlowUpdateContext = Pick<
  RunContext,
  'dir' | 'events' | 'settings' | 'rollouts' | 'train' | 'plan' | 'skillInit' | 'opt' | 'selection'
>;

/** Returns the comparison pairs when it made them (the meta skill uses the same). */
export async function slowUpdate(
  ctx: SlowUpdateContext,
  state: TrainState,
  epoch: number,
  epochSkill: SkillPackage,
): Promise<ComparisonPair[] | undefined> {
  const base = ctx.dir.slowUpdate(epoch);
  const markerFile = path.join(base, 'slow_result.json');
  const done = readJson<SlowResult>(markerFile);
  if (done) {
    applyStateAfter(state, done.state_after);
    return undefined;
  }
  const started = performance.now();
  const origin = originId({ kind: 'slow_update', epoch });
  const write = (result: SlowResult) => {
    ctx.dir.writeJson(markerFile, { ...result, time_s: round((performance.now() - started) / 1000, 1) });
    applyStateAfter(state, result.state_after);
    ctx.events.emit({
      type: 'epoch_boundary',
      epoch,
      kind: 'slow_update',
      action: result.action,
      detail: result.detail,
    });
  };
  if (epoch === 1) {
    // Nothing to compare yet: make room for the guidance. Empty markers do not change what the target reads.
    const current = {
      ...state.current,
      skill: injectEmptySlowUpdateField(state.current.skill),
      origin: originId({ kind: 'slow_update_placeholder', epoch }),
    };
    write({ action: 'inject_placeholder', epoch, state_after: { current, best: state.best } });
    return undefined;
  }
  ctx.events.emit({
    type: 'stage_started',
    step: state.lastStep,
    epoch,
    stage: 'slow_update',
    detail: `epoch ${epoch - 1} vs ${epoch}`,
  });
  const prevSkill = epochEndSkill(ctx, epoch - 1);
  const cmp = await comparePairs(ctx, prevSkill, epochSkill, epoch, base);
  savePairs(ctx, base, cmp.pairs, cmp.all);
  const counts = countCategories(cmp.pairs);
  const summary = { prev_hard: cmp.prevHard, curr_hard: cmp.currHard, categories: counts };
  const res = await writeEpochNote(ctx.opt, 'slow_update', {
    prevSkill: prevSkill.skill,
    currSkill: epochSkill.skill,
    previous: extractSlowUpdateField(state.current.skill),
    pairs: cmp.pairs,
  });
  if (!res) {
    write({ action: 'no_content', epoch, ...summary, detail: 'no guidance written' });
    return cmp.pairs;
  }
  const candidate = withSkill(state.current, replaceSlowUpdateField(state.current.skill, res.content));
  writeSkillFile(ctx.dir, path.join(base, 'candidate_skill.md'), candidate);
  const tokens = countTokens(candidate.skill);
  const { maxSkillTokens } = ctx.settings;
  if (maxSkillTokens > 0 && tokens > maxSkillTokens) {
    write({
      action: 'over_length_limit',
      epoch,
      reasoning: res.reasoning,
      slow_update_content: res.content,
      ...summary,
      detail: `${tokens} tokens, over optimizer.max_skill_tokens=${maxSkillTokens}`,
    });
    return cmp.pairs;
  }
  // Gated, the guidance must beat the current skill; in force mode it always goes in, and its
  // score is measured rather than assumed.
  const gated = ctx.settings.epoch.slowUpdateGated;
  const { sel, decision, test } = await gateCandidate(ctx, candidate, state.current, state.best, {
    rule: gated ? 'gate' : 'force',
    dir: path.join(base, 'selection_eval'),
  });
  applyDecision(state, scoredSkill(candidate, sel.gate, origin), decision, state.lastStep);
  write({
    action: decision.action,
    epoch,
    reasoning: res.reasoning,
    slow_update_content: res.content,
    ...summary,
    candidate_hash: packageHash(candidate),
    selection_hard: sel.hard,
    selection_soft: sel.soft,
    selection_gate_score: sel.gate,
    selection_rollouts_used: sel.used,
    ...(test ? { gate_test: test } : {}),
    state_after: { current: state.current, best: state.best },
    detail: `regressed=${counts.regressed} improved=${counts.improved} selection=${sel.gate.toFixed(4)}`,
  });
  return cmp.pairs;
}
