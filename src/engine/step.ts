/**
 * One optimisation step: the six stages of the original, in order.
 *   1 ROLLOUT    the target runs a batch of training items under the current skill
 *   2 REFLECT    analysts turn failures (and successes) into patches, minibatch by minibatch
 *   3 AGGREGATE  patches are merged hierarchically
 *   4 SELECT     the learning rate caps how many changes are kept; the optimizer ranks them
 *   5 UPDATE     the kept changes make a candidate skill
 *   6 EVALUATE   the gate accepts the candidate only if it beats the current skill on selection
 * Reflection starts while rollouts are still running, and merging while analysts still are.
 */
import path from 'node:path';
import type { Trajectory } from '../envs/types.ts';
import { appendLine } from '../run/atomic.ts';
import { pad4 } from '../run/layout.ts';
import type { HistoryRecord } from '../run/records.ts';
import { countTokens, skillHash } from '../skill/document.ts';
import { summariseReports } from '../skill/edits.ts';
import { count } from '../util/plural.ts';
import { Rng } from '../util/random.ts';
import { aggregate, type Merged } from './aggregate.ts';
import { round, type RunContext, type TrainState } from './context.ts';
import type { Batch } from './data.ts';
import { decide } from './gate.ts';
import { PAYLOAD, type Suggestion } from './protocol.ts';
import { Reflector, type AnalystResult, type ReflectSettings } from './reflect.ts';
import { rollout } from './rollout.ts';
import { computeScore } from './scoring.ts';
import { decideLearningRate, rankAndSelect, type LrDecision } from './select.ts';
import { scoreOnSelection } from './selection.ts';
import { flushAppendixNotes, maybeConsolidate } from './appendix.ts';
import { persistState } from './state.ts';
import { renderStepBuffer, stepEntry } from './step-buffer.ts';
import { applyPatch, rewriteFromSuggestions, takeFullRewrite, type UpdateResult } from './update.ts';

export interface StepPlan {
  epoch: number;
  step: number;
  stepInEpoch: number;
  batches: Batch[];
  metaSkill: string;
}

class Clock {
  private last = performance.now();
  readonly timing: Record<string, number> = {};
  lap(stage: string): number {
    const now = performance.now();
    const s = (now - this.last) / 1000;
    this.timing[`${stage}_s`] = round(s, 1);
    this.last = now;
    return s;
  }
}

export async function trainStep(ctx: RunContext, state: TrainState, plan: StepPlan): Promise<void> {
  const { config, dir, events } = ctx;
  const { step, epoch } = plan;
  const started = performance.now();
  const mark = ctx.models.ledger.mark();
  const clock = new Clock();
  const stepDir = dir.step(step);
  const accumulation = plan.batches.length;
  const skill = state.current.skill;
  const emit = (stage: string, detail: string, seconds?: number) => {
    // A stage starts only within the run's limits.
    if (seconds === undefined) ctx.models.admission.check();
    events.emit(seconds === undefined ? { type: 'stage_started', step, epoch, stage, detail } : { type: 'stage_finished', step, epoch, stage, seconds, detail });
  };

  // ① ROLLOUT, with ② REFLECT starting as minibatches fill up.
  const nItems = plan.batches.reduce((n, b) => n + b.items.length, 0);
  emit('rollout', `train items=${nItems} (batch_seed=${plan.batches.map((b) => b.seed).join(',')})`);
  const stepBufferText = renderStepBuffer(state.stepBuffer);
  const batchDir = (a: number) => (accumulation > 1 ? path.join(stepDir, `batch_${a}`) : stepDir);
  const reflectors = plan.batches.map((b, a) => {
    const settings: ReflectSettings = {
      ctx: ctx.opt,
      skill,
      budget: config.optimizer.learning_rate,
      minibatchSize: config.gradient.minibatch_size,
      failureOnly: config.gradient.failure_only,
      stepBuffer: state.stepBuffer,
      stepBufferText,
      metaSkill: plan.metaSkill,
      skillAware: config.optimizer.use_skill_aware_reflection,
      appendixSource: config.optimizer.skill_aware_appendix_source,
      analystGuide: ctx.env.analystGuide ?? '',
      limit: ctx.analystLimit,
      patchesDir: path.join(batchDir(a), 'patches'),
    };
    return new Reflector(settings, new Rng(b.seed).shuffle(b.items.map((_, i) => i)));
  });
  let progress = 0;
  const rolled = await Promise.all(
    plan.batches.map((b, a) =>
      rollout({
        env: ctx.env,
        target: ctx.models.target,
        judge: ctx.models.judge,
        skill,
        items: b.items,
        limit: ctx.rolloutLimit,
        cache: ctx.scores,
        seed: b.seed,
        training: true,
        dir: path.join(batchDir(a), 'rollout'),
        onResult: (t, i) => reflectors[a]!.add(i, t),
        onProgress: () => events.emit({ type: 'stage_progress', step, stage: 'rollout', done: ++progress, total: nItems }),
      }),
    ),
  );
  const trajectories = rolled.flatMap((r) => r.trajectories).filter((t): t is Trajectory => t !== undefined);
  const rolloutScore = computeScore(trajectories);
  if (trajectories.length > 0 && rolloutScore.n === 0) {
    throw new Error(`every rollout of step ${step} failed (${trajectories[0]!.error?.kind}: ${trajectories[0]!.error?.message}); check the target model and its endpoint`);
  }
  const batchStats = plan.batches.map((b, a) => {
    const s = computeScore(rolled[a]!.trajectories.filter((t): t is Trajectory => t !== undefined));
    return { batch_idx: b.index, batch_seed: b.seed, n_envs: b.items.length, hard: round(s.hard, 6), soft: round(s.soft, 6) };
  });
  emit('rollout', `hard=${rolloutScore.hard.toFixed(4)} soft=${rolloutScore.soft.toFixed(4)}${rolloutScore.errors ? ` errors=${rolloutScore.errors}` : ''}`, clock.lap('rollout'));

  // ② REFLECT (the rest of it) and ③ AGGREGATE, which starts on the first finished groups.
  const calls = reflectors.map((r) => r.close());
  const failureCalls = calls.flatMap((c) => c.failure);
  const successCalls = calls.flatMap((c) => c.success);
  const { label: items } = PAYLOAD[ctx.mode];
  emit(
    'reflect',
    `${count(failureCalls.length, 'failure minibatch', 'failure minibatches')}, ${count(successCalls.length, 'success minibatch', 'success minibatches')} ` +
      `(up to ${config.gradient.minibatch_size} trajectories each; at most ${config.optimizer.learning_rate} ${items} per patch)`,
  );
  const asPatch = (p: Promise<AnalystResult>): Promise<Merged | null> => p.then((r) => (r.patch ? { reasoning: r.patch.reasoning, items: r.patch.items } : null));
  const mergeSettings = { ctx: ctx.opt, skill, metaSkill: plan.metaSkill, groupSize: config.gradient.merge_batch_size };
  const merging = aggregate(mergeSettings, failureCalls.map(asPatch), successCalls.map(asPatch));
  // Awaited below; if the step fails first, its rejection must not go unhandled.
  merging.catch(() => {});
  const perBatch = await Promise.all(calls.map((c) => Promise.all([...c.failure, ...c.success])));
  const analysts = perBatch.flat();
  if (analysts.length > 0 && analysts.every((r) => r.failed)) {
    throw new Error(
      `every optimizer call of step ${step} failed (${analysts.length} analyst calls; see the warnings above). ` +
        'Check the optimizer model and its endpoint, then resume the run',
    );
  }
  const nFail = analysts.filter((r) => r.source === 'failure' && r.patch).length;
  const nSucc = analysts.filter((r) => r.source === 'success' && r.patch).length;
  emit('reflect', `failure_patches=${nFail} success_patches=${nSucc}`, clock.lap('reflect'));
  emit('aggregate', `failure=${nFail} success=${nSucc} (group size ${config.gradient.merge_batch_size})`);
  const merged = await merging;
  const { key } = PAYLOAD[ctx.mode];
  const ofItems = (n: number) => count(n, items.replace(/s$/, ''), items);
  dir.writeArtifact(path.join(stepDir, 'merged_patch.json'), { reasoning: merged.reasoning, [key]: merged.items });
  emit('aggregate', `merged into ${ofItems(merged.items.length)}`, clock.lap('aggregate'));
  const notes = analysts.flatMap((r) => r.notes);
  const findings = analysts.flatMap((r) => r.findings);

  const record: HistoryRecord & Record<string, unknown> = {
    step,
    epoch,
    step_in_epoch: plan.stepInEpoch,
    tokens: {},
    rollout_hard: round(rolloutScore.hard, 6),
    rollout_soft: round(rolloutScore.soft, 6),
    rollout_n: trajectories.length,
    rollout_errors: rolloutScore.errors,
    accumulation_batches: batchStats.map((b, a) => ({
      ...b,
      n_failure_patches: perBatch[a]!.filter((r) => r.source === 'failure' && r.patch).length,
      n_success_patches: perBatch[a]!.filter((r) => r.source === 'success' && r.patch).length,
    })),
    n_patches: nFail + nSucc,
    n_failure_patches: nFail,
    n_success_patches: nSucc,
    action: '',
  };

  const finish = async (action: string, extra: Record<string, unknown> = {}) => {
    Object.assign(record, extra, { action });
    if (config.optimizer.use_skill_aware_reflection) Object.assign(record, flushAppendixNotes(ctx, state, notes, stepDir), await maybeConsolidate(ctx, state));
    record.current_score = state.current.score;
    record.best_score = state.best.score;
    record.best_step = state.best.step;
    record.current_origin = state.current.origin;
    record.best_origin = state.best.origin;
    record.skill_len = state.current.skill.length;
    record.skill_tokens = countTokens(state.current.skill);
    record.tokens = ctx.models.ledger.byPurpose(mark);
    // Wall-clock figures go to the step record only, so that history.json is reproducible.
    const wall = round((performance.now() - started) / 1000, 1);
    dir.writeArtifact(path.join(stepDir, 'step_record.json'), { ...record, timing: clock.timing, wall_time_s: wall });
    state.history.push(record);
    state.lastStep = step;
    persistState(ctx, state);
    events.emit({ type: 'step_finished', step, epoch, action, current_score: state.current.score, best_score: state.best.score, seconds: wall, timing: clock.timing });
  };

  if (merged.items.length === 0) {
    events.info('[skip] no usable patches: skill unchanged');
    await finish('skip_no_patches');
    return;
  }

  // ④ SELECT
  emit('select', ofItems(merged.items.length));
  let budget: number | null = null;
  let lrDecision: LrDecision | undefined;
  let selected = merged.items;
  let how = 'all';
  if (ctx.mode !== 'full_rewrite_minibatch') {
    if (ctx.lrControl === 'autonomous') {
      lrDecision = await decideLearningRate(ctx.opt, {
        skill,
        items: merged.items,
        rolloutHard: rolloutScore.hard,
        rolloutSoft: rolloutScore.soft,
        rolloutN: trajectories.length,
        stepBufferText,
        metaSkill: plan.metaSkill,
      });
      budget = lrDecision.learning_rate;
      dir.writeArtifact(path.join(stepDir, 'lr_decision.json'), lrDecision);
      appendLine(dir.path('lr_history.jsonl'), JSON.stringify({ step, epoch, ...lrDecision }));
    } else {
      budget = state.scheduler.step();
    }
    const sel = await rankAndSelect(ctx.opt, skill, merged.items, budget, plan.metaSkill);
    selected = sel.items;
    how = sel.how;
  }
  dir.writeArtifact(path.join(stepDir, 'ranked_edits.json'), { reasoning: `${merged.reasoning} [${how}: ${selected.length}/${merged.items.length}]`, [key]: selected });
  emit('select', `${merged.items.length} -> ${ofItems(selected.length)} (budget=${budget ?? 'none'}, lr_control=${ctx.lrControl})`, clock.lap('select'));
  Object.assign(record, {
    n_edits_merged: merged.items.length,
    n_edits_ranked: selected.length,
    edit_budget: budget,
    lr_control_mode: ctx.lrControl,
    ...(lrDecision ? { lr_decision: lrDecision } : {}),
    support_counts: selected.map((i) => (i as { support_count?: number }).support_count ?? null),
  });

  // ⑤ UPDATE
  emit('update', `mode=${ctx.mode}`);
  let update: UpdateResult;
  if (ctx.mode === 'patch') update = applyPatch(skill, selected, ctx.maxSkillTokens);
  else if (ctx.mode === 'rewrite_from_suggestions') {
    update = await rewriteFromSuggestions(ctx.opt, {
      skill,
      suggestions: selected as Suggestion[],
      stepBufferText,
      maxTokens: ctx.maxSkillTokens,
      reasoningEffort: (config.model.rewrite_reasoning_effort || undefined) as typeof ctx.opt.reasoningEffort,
      outputTokens: config.model.rewrite_max_completion_tokens,
    });
  } else update = takeFullRewrite(skill, selected, ctx.maxSkillTokens);
  if (update.reports?.length) dir.writeArtifact(path.join(stepDir, 'edit_apply_report.json'), update.reports);
  if (update.candidate === undefined) {
    emit('update', `no candidate: ${update.reason}`, clock.lap('update'));
    events.info(`[skip] no usable rewrite (${update.reason}): skill unchanged`);
    await finish('skip_no_rewrite', { skip_reason: update.reason });
    return;
  }
  const candidate = update.candidate;
  dir.writeArtifact(path.join(stepDir, 'candidate_skill.md'), candidate);
  if (update.changeSummary) dir.writeArtifact(path.join(stepDir, 'rewrite_result.json'), { change_summary: update.changeSummary });
  Object.assign(record, {
    candidate_hash: skillHash(candidate),
    candidate_skill_len: candidate.length,
    candidate_skill_tokens: countTokens(candidate),
    ...(update.changeSummary ? { rewrite_change_summary: update.changeSummary } : {}),
    ...(update.reports ? { edit_apply_summary: summariseReports(update.reports) } : {}),
  });
  emit('update', `skill_len ${skill.length} -> ${candidate.length}`, clock.lap('update'));

  // ⑥ EVALUATE
  const useGate = config.evaluation.use_gate;
  emit('evaluate', `selection items=${ctx.selection.length}`);
  const sel = await scoreOnSelection(ctx, candidate, {
    dir: path.join(stepDir, 'selection_eval'),
    bar: useGate && config.evaluation.gate_early_stop ? state.current.score : undefined,
    currentSkill: skill,
    stage: { step },
  });
  const before = { currentScore: state.current.score, bestScore: state.best.score, bestStep: state.best.step };
  const decision = sel.complete ? decide(sel.gate, before, step, useGate) : ({ action: 'reject', ...before } as const);
  const accepted = decision.action !== 'reject';
  if (accepted) {
    state.current = { skill: candidate, score: decision.currentScore, origin: `step_${pad4(step)}` };
    if (decision.bestStep === step) state.best = { ...state.current, step };
  }
  events.emit({
    type: 'gate_decision',
    step,
    epoch,
    action: decision.action,
    metric: config.evaluation.gate_metric,
    candidate_score: sel.gate,
    current_score: before.currentScore,
    best_score: before.bestScore,
    rollouts_used: sel.used,
    rollouts_saved: sel.saved,
    early_stopped: !sel.complete,
  });
  clock.lap('evaluate');
  Object.assign(record, {
    selection_hard: sel.hard,
    selection_soft: sel.soft,
    gate_metric: config.evaluation.gate_metric,
    // After an early stop only a bound is known: the score the candidate could at most have had.
    candidate_gate_score: sel.complete ? sel.gate : null,
    ...(sel.complete ? {} : { candidate_gate_upper_bound: sel.gate }),
    gate: { rollouts_used: sel.used, rollouts_saved: sel.saved, cache_hits: sel.cacheHits, early_stopped: !sel.complete, errors: sel.errors },
  });

  const entry = stepEntry({
    step,
    action: decision.action,
    trajectories,
    findings,
    rejected: { items: selected, scoreBefore: before.currentScore, scoreAfter: sel.gate, stoppedEarly: !sel.complete },
  });
  state.stepBuffer.push(entry);
  dir.writeArtifact(path.join(stepDir, 'trajectory_digest.json'), entry);
  await finish(decision.action);
}
