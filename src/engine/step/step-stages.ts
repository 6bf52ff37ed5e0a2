/**
 * The six stages as one step runs them: each calls its stage module (`stages/`), writes the
 * step's files, reports to the event log and to the step record, and hands the next stage
 * what it needs.
 */
import path from 'node:path';
import type { Trajectory } from '../../envs/types.ts';
import { changesOf, PAYLOAD, type UpdateItem } from '../../protocol/optimizer.ts';
import { appendLine } from '../../run/atomic.ts';
import { pad4 } from '../../run/layout.ts';
import type { GateAction } from '../../run/records.ts';
import { countTokens, skillHash } from '../../skill/document.ts';
import { summariseReports } from '../../skill/edits.ts';
import { count } from '../../util/plural.ts';
import { round, type TrainState } from '../context.ts';
import { reflectionOrder, type Batch } from '../batches.ts';
import { stepEntry } from '../optimizer/step-buffer.ts';
import { computeScore, type Score } from '../scoring/metrics.ts';
import { aggregate, aggregateCombined, type Merged } from '../stages/aggregate.ts';
import type { EditBudget } from '../stages/edit-budget.ts';
import { applyDecision } from '../stages/gate.ts';
import { gateCandidate, type GateOutcome } from '../stages/gate-evaluation.ts';
import type { GateTest } from '../stages/paired-gate.ts';
import { appliedEdits, recordStepCandidate } from '../pool/pool-steps.ts';
import { Reflector, type AnalystCalls, type AnalystResult } from '../stages/reflect.ts';
import type { OptimizerContext } from '../optimizer/ask.ts';
import { rankAndSelect } from '../stages/select.ts';
import { applyPatch, rewriteFromSuggestions, takeFullRewrite, type UpdateResult } from '../stages/update.ts';
import type { StepScope } from './step-scope.ts';

export interface Rolled {
  trajectories: Trajectory[];
  score: Score;
  /** Per batch, its trajectories (undefined: never started). */
  perBatch: (Trajectory | undefined)[][];
}

export interface Reflected {
  analysts: AnalystResult[];
  /** Execution-lapse notes for the appendix (skill-aware reflection). */
  notes: string[];
  /** The merge, started as soon as its first groups of analysts finished. */
  merging: Promise<Merged>;
  nFail: number;
  nSucc: number;
}

const label = (s: StepScope) => PAYLOAD[s.ctx.settings.mode].label;
const ofItems = (s: StepScope, n: number) => count(n, label(s).replace(/s$/, ''), label(s));

/** A batch's reflector, and the order in which it forms minibatches (which is also the order its rollouts start in). */
export interface Reflection {
  batch: Batch;
  reflector: Reflector;
  order: number[];
}

/** What a step's reflection works from. */
export interface ReflectionInputs {
  opt: OptimizerContext;
  skill: string;
  memory: StepScope['memory'];
  batches: Batch[];
  metaSkill: string;
  /** Where batch a's analyst replies go (none: not written). */
  patchesDir?: (a: number) => string;
}

type ReflectionContext = Pick<StepScope['ctx'], 'settings' | 'env' | 'analystLimit'>;

/** One reflector per batch, fed by its rollouts as they finish. */
export function reflectors(ctx: ReflectionContext, inputs: ReflectionInputs): Reflection[] {
  const { settings, env, analystLimit } = ctx;
  return inputs.batches.map((b, a) => {
    const reflect = {
      ctx: inputs.opt,
      skill: inputs.skill,
      budget: settings.reflect.perPatch,
      minibatchSize: settings.reflect.minibatchSize,
      failureOnly: settings.reflect.failureOnly,
      stepBuffer: inputs.memory.entries,
      stepBufferText: inputs.memory.text,
      metaSkill: inputs.metaSkill,
      skillAware: settings.skillAware.on,
      appendixSource: settings.skillAware.appendixSource,
      analystGuide: env.analystGuide ?? '',
      traces: settings.reflect.traces,
      limit: analystLimit,
      patchesDir: inputs.patchesDir?.(a),
    };
    const order = reflectionOrder(b);
    return { batch: b, reflector: new Reflector(reflect, order), order };
  });
}

/** The step's reflectors. */
export function startReflection(s: StepScope): Reflection[] {
  const { skill, memory, plan, files } = s;
  return reflectors(s.ctx, {
    opt: s.ctx.opt,
    skill,
    memory,
    batches: plan.batches,
    metaSkill: plan.metaSkill,
    patchesDir: (a) => path.join(files.batch(a), 'patches'),
  });
}

/**
 * ③ started: the analysts' patches merged as they come, by the configured strategy. `budget`:
 * the step's edit budget when it is known before the merge (the combined strategy ranks within it).
 */
export function startMerge(
  ctx: ReflectionContext,
  inputs: Pick<ReflectionInputs, 'opt' | 'skill' | 'metaSkill'>,
  calls: AnalystCalls[],
  budget: number | undefined,
): Promise<Merged> {
  const { reflect } = ctx.settings;
  const asPatch = (p: Promise<AnalystResult>): Promise<Merged | null> =>
    p.then((r) => (r.patch ? { reasoning: r.patch.reasoning, items: r.patch.items } : null));
  const failure = calls.flatMap((c) => c.failure).map(asPatch);
  const success = calls.flatMap((c) => c.success).map(asPatch);
  const merge = {
    ctx: inputs.opt,
    skill: inputs.skill,
    metaSkill: inputs.metaSkill,
    groupSize: reflect.mergeGroupSize,
  };
  return reflect.mergeStrategy === 'combined'
    ? aggregateCombined(merge, failure, success, budget)
    : aggregate(merge, failure, success);
}

/**
 * ① The target runs the step's batches under the current skill, each batch's items started in
 * the order its reflector consumes them, so that the first minibatches fill first.
 */
export async function rolloutStage(s: StepScope, reflection: Reflection[]): Promise<Rolled> {
  const { batches } = s.plan;
  const nItems = batches.reduce((n, b) => n + b.items.length, 0);
  s.stages.start('rollout', `train items=${nItems} (batch_seed=${batches.map((b) => b.seed).join(',')})`);
  const progress = s.stages.progress('rollout');
  let done = 0;
  const rolled = await Promise.all(
    reflection.map(({ batch, reflector, order }, a) =>
      s.ctx.rollouts.run(s.skill, batch.items, {
        seed: batch.seed,
        training: true,
        order,
        dir: path.join(s.files.batch(a), 'rollout'),
        onResult: (t, i) => reflector.add(i, t),
        onProgress: () => progress(++done, nItems),
      }),
    ),
  );
  const trajectories = rolled.flatMap((r) => r.trajectories).filter((t): t is Trajectory => t !== undefined);
  const score = computeScore(trajectories);
  const first = trajectories[0];
  if (first && score.n === 0) {
    throw new Error(
      `every rollout of step ${s.step} failed (${first.error?.kind}: ${first.error?.message}); check the target model and its endpoint`,
    );
  }
  s.stages.finish(
    'rollout',
    `hard=${score.hard.toFixed(4)} soft=${score.soft.toFixed(4)}${score.errors ? ` errors=${score.errors}` : ''}`,
  );
  return { trajectories, score, perBatch: rolled.map((r) => r.trajectories) };
}

/**
 * ② The analysts' patches, with ③ the merge started on them. `budget`: the step's edit budget
 * when it is known before the merge, for the combined strategy's top merge to rank within.
 */
export async function reflectStage(
  s: StepScope,
  reflection: Reflection[],
  rolled: Rolled,
  budget: number | undefined,
): Promise<Reflected> {
  const { settings, opt } = s.ctx;
  const calls = reflection.map(({ reflector }) => reflector.close());
  const failureCalls = calls.flatMap((c) => c.failure);
  const successCalls = calls.flatMap((c) => c.success);
  s.stages.start(
    'reflect',
    `${count(failureCalls.length, 'failure minibatch', 'failure minibatches')}, ${count(successCalls.length, 'success minibatch', 'success minibatches')} ` +
      `(up to ${settings.reflect.minibatchSize} trajectories each; at most ${settings.reflect.perPatch} ${label(s)} per patch)`,
  );
  const merging = startMerge(s.ctx, { opt, skill: s.skill, metaSkill: s.plan.metaSkill }, calls, budget);
  // Awaited by the aggregate stage; if the step fails first, its rejection must not go unhandled.
  merging.catch(() => {});
  const perBatch = await Promise.all(
    reflection.map(async ({ batch }, a) => ({
      batch,
      trajectories: rolled.perBatch[a] ?? [],
      analysts: await Promise.all([...(calls[a]?.failure ?? []), ...(calls[a]?.success ?? [])]),
    })),
  );
  const analysts = perBatch.flatMap((b) => b.analysts);
  if (analysts.length > 0 && analysts.every((r) => r.failed)) {
    throw new Error(
      `every optimizer call of step ${s.step} failed (${analysts.length} analyst calls; see the warnings above). ` +
        'Check the optimizer model and its endpoint, then resume the run',
    );
  }
  const patches = (rs: AnalystResult[], source: AnalystResult['source']) =>
    rs.filter((r) => r.source === source && r.patch).length;
  const nFail = patches(analysts, 'failure');
  const nSucc = patches(analysts, 'success');
  s.stages.finish('reflect', `failure_patches=${nFail} success_patches=${nSucc}`);
  s.record.rollout({
    rollout_hard: round(rolled.score.hard, 6),
    rollout_soft: round(rolled.score.soft, 6),
    rollout_n: rolled.trajectories.length,
    rollout_errors: rolled.score.errors,
    accumulation_batches: perBatch.map(({ batch, trajectories, analysts: ofBatch }) => {
      const score = computeScore(trajectories.filter((t): t is Trajectory => t !== undefined));
      return {
        batch_idx: batch.index,
        batch_seed: batch.seed,
        n_envs: batch.items.length,
        hard: round(score.hard, 6),
        soft: round(score.soft, 6),
        n_failure_patches: patches(ofBatch, 'failure'),
        n_success_patches: patches(ofBatch, 'success'),
      };
    }),
    n_patches: nFail + nSucc,
    n_failure_patches: nFail,
    n_success_patches: nSucc,
  });
  return { analysts, notes: analysts.flatMap((r) => r.notes), merging, nFail, nSucc };
}

/** ③ The patches merged into one list of changes. */
export async function aggregateStage(s: StepScope, reflected: Reflected): Promise<Merged> {
  s.stages.start(
    'aggregate',
    `failure=${reflected.nFail} success=${reflected.nSucc} (group size ${s.ctx.settings.reflect.mergeGroupSize})`,
  );
  const merged = await reflected.merging;
  s.files.write('merged_patch.json', { reasoning: merged.reasoning, [PAYLOAD[s.ctx.settings.mode].key]: merged.items });
  s.stages.finish('aggregate', `merged into ${ofItems(s, merged.items.length)}`);
  if (merged.items.length === 0) s.ctx.events.info('[skip] no usable patches: skill unchanged');
  return merged;
}

/** ④ The changes this step's budget keeps (`policy`: none in the full-rewrite mode), ranked by the optimizer when there are more. */
export async function selectStage(
  s: StepScope,
  policy: EditBudget | undefined,
  merged: Merged,
  rolled: Rolled,
): Promise<UpdateItem[]> {
  const { settings, opt, dir } = s.ctx;
  s.stages.start('select', ofItems(s, merged.items.length));
  let budget: number | null = null;
  let selected = merged.items;
  let how = 'all';
  const chosen = await policy?.next({
    skill: s.skill,
    items: merged.items,
    rolloutHard: rolled.score.hard,
    rolloutSoft: rolled.score.soft,
    rolloutN: rolled.trajectories.length,
    stepBufferText: s.memory.text,
    metaSkill: s.plan.metaSkill,
  });
  if (chosen?.decision) {
    s.files.write('lr_decision.json', chosen.decision);
    appendLine(dir.path('lr_history.jsonl'), JSON.stringify({ step: s.step, epoch: s.epoch, ...chosen.decision }));
  }
  if (chosen) {
    budget = chosen.budget;
    ({ items: selected, how } = await rankAndSelect(
      opt,
      s.skill,
      merged.items,
      budget,
      s.plan.metaSkill,
      merged.rankedFor,
    ));
  }
  s.files.write('ranked_edits.json', {
    reasoning: `${merged.reasoning} [${how}: ${selected.length}/${merged.items.length}]`,
    [PAYLOAD[settings.mode].key]: selected,
  });
  s.stages.finish(
    'select',
    `${merged.items.length} -> ${ofItems(s, selected.length)} (budget=${budget ?? 'none'}, lr_control=${settings.lr.control})`,
  );
  s.record.select({
    n_edits_merged: merged.items.length,
    n_edits_ranked: selected.length,
    edit_budget: budget,
    lr_control_mode: settings.lr.control,
    lr_decision: chosen?.decision,
    support_counts: selected.map((i) => i.support_count ?? null),
  });
  return selected;
}

/** ⑤ The candidate skill, or undefined when the update gave none (the step is then skipped). */
export async function updateStage(s: StepScope, selected: UpdateItem[]): Promise<string | undefined> {
  const { settings, opt, events } = s.ctx;
  s.stages.start('update', `mode=${settings.mode}`);
  const changes = changesOf(settings.mode, selected);
  let update: UpdateResult;
  if (changes.mode === 'patch') {
    update = applyPatch(s.skill, changes.items, settings.maxSkillTokens);
    s.appliedEdits = appliedEdits(changes.items, update.reports ?? []);
  } else if (changes.mode === 'rewrite_from_suggestions') {
    update = await rewriteFromSuggestions(opt, {
      skill: s.skill,
      suggestions: changes.items,
      stepBufferText: s.memory.text,
      maxTokens: settings.maxSkillTokens,
      ...settings.rewrite,
    });
  } else update = takeFullRewrite(s.skill, changes.items, settings.maxSkillTokens);
  if (update.reports?.length) s.files.write('edit_apply_report.json', update.reports);
  const candidate = update.candidate;
  if (candidate === undefined) {
    s.stages.finish('update', `no candidate: ${update.reason}`);
    events.info(`[skip] no usable rewrite (${update.reason}): skill unchanged`);
    s.record.skipped(update.reason ?? '');
    return undefined;
  }
  s.files.write('candidate_skill.md', candidate);
  if (update.changeSummary) s.files.write('rewrite_result.json', { change_summary: update.changeSummary });
  s.record.update({
    candidate_hash: skillHash(candidate),
    candidate_skill_len: candidate.length,
    candidate_skill_tokens: countTokens(candidate),
    rewrite_change_summary: update.changeSummary,
    edit_apply_summary: update.reports ? summariseReports(update.reports) : undefined,
  });
  s.stages.finish('update', `skill_len ${s.skill.length} -> ${candidate.length}`);
  return candidate;
}

/** The gate's outcome for the step; `rest`, after an early accept, resolves once the full score is in the state and the record. */
export interface Gated {
  action: GateAction;
  rest?: Promise<void>;
}

/**
 * ⑥ The gate scores the candidate on the selection split and takes it in or not; the step buffer
 * remembers. `onGateQueued`: called once the gate's rollouts are queued (work that may wait behind
 * them). `resume`: given when the gate may accept early (`evaluation.gate_early_accept`): the
 * decision is then returned as soon as it is certain, with the candidate in the state (its score
 * filled in by `rest`), and the rest of the selection items start when `resume` resolves.
 */
export async function evaluateStage(
  s: StepScope,
  state: TrainState,
  candidate: string,
  selected: UpdateItem[],
  rolled: Rolled,
  reflected: Reflected,
  hooks: { onGateQueued?: () => void; resume?: Promise<void> } = {},
): Promise<Gated> {
  const { settings, selection, events } = s.ctx;
  const { gate } = settings;
  s.stages.start('evaluate', `selection items=${selection.items.length}`);
  const before = { current: s.reference.score, best: state.best.score };
  const origin = `step_${pad4(s.step)}`;
  const remember = (action: GateAction, scoreAfter: number, stoppedEarly: boolean) => {
    const entry = stepEntry({
      step: s.step,
      action,
      trajectories: rolled.trajectories,
      findings: reflected.analysts.flatMap((r) => r.findings),
      rejected: { items: selected, scoreBefore: before.current, scoreAfter, stoppedEarly },
    });
    state.stepBuffer.push(entry);
    s.files.write('trajectory_digest.json', entry);
  };
  /** Set by an early accept: the skill states taken in, whose score the full evaluation fills in. */
  let taken:
    | { action: GateAction; after: number; current: TrainState['current']; best?: TrainState['best'] }
    | undefined;
  let told!: () => void;
  const early = new Promise<'early'>((resolve) => (told = () => resolve('early')));
  const gating = gateCandidate(s.ctx, candidate, s.reference, state.best, {
    rule: gate.on ? 'gate' : 'force',
    dir: path.join(s.files.root, 'selection_eval'),
    step: s.step,
    onQueued: hooks.onGateQueued,
    early: hooks.resume
      ? (decision, after) => {
          // An accept is certain: the next step may start from the candidate now.
          const current = { skill: candidate, score: Number.NaN, origin };
          taken = {
            action: decision.action,
            after,
            current,
            ...(decision.newBest ? { best: { ...current, step: s.step } } : {}),
          };
          state.current = taken.current;
          if (taken.best) state.best = taken.best;
          remember(decision.action, Number.NaN, false);
          told();
          return hooks.resume!;
        }
      : undefined,
  });
  const finish = ({ sel, decision, test, referenceRollouts }: GateOutcome): GateAction => {
    if (taken) {
      taken.current.score = sel.gate;
      if (taken.best) taken.best.score = sel.gate;
    } else {
      const after = applyDecision(state, { skill: candidate, score: sel.gate, origin }, decision, s.step);
      state.current = after.current;
      state.best = after.best;
    }
    if (state.pool) recordStepCandidate(s, state, candidate, { sel, decision, test });
    const used = sel.used + referenceRollouts;
    events.emit({
      type: 'gate_decision',
      step: s.step,
      epoch: s.epoch,
      action: decision.action,
      metric: gate.scoring.metric,
      candidate_score: sel.gate,
      current_score: before.current,
      best_score: before.best,
      rollouts_used: used,
      rollouts_saved: sel.saved,
      early_stopped: !sel.complete,
      ...(taken ? { accepted_after: taken.after } : {}),
      ...(test
        ? {
            test: {
              method: test.method,
              n: test.n,
              effect: test.effect,
              p: test.p,
              alpha: test.alpha,
              passed: test.passed,
            },
          }
        : {}),
    });
    const scored = sel.complete
      ? sel.gate.toFixed(4)
      : `at most ${sel.gate.toFixed(4)} (stopped early after ${sel.used + sel.cacheHits} of ${selection.items.length * selection.repeats})`;
    const tested = test
      ? ` (paired ${test.method}: effect ${test.effect >= 0 ? '+' : ''}${test.effect.toFixed(4)}, p=${test.p.toPrecision(3)}, n=${test.n})`
      : '';
    s.stages.finish(
      'evaluate',
      `${decision.action}: candidate ${scored} vs current ${before.current.toFixed(4)}${tested}`,
    );
    s.record.gate({
      selection_hard: sel.hard,
      selection_soft: sel.soft,
      gate_metric: gate.scoring.metric,
      // After an early stop only a bound is known: the score the candidate could at most have had.
      candidate_gate_score: sel.complete ? sel.gate : null,
      candidate_gate_upper_bound: sel.complete ? undefined : sel.gate,
      gate: {
        rollouts_used: used,
        rollouts_saved: sel.saved,
        cache_hits: sel.cacheHits,
        early_stopped: !sel.complete,
        errors: sel.errors,
        ...(test ? { test: roundTest(test) } : {}),
      },
    });
    if (!taken) remember(decision.action, sel.gate, !sel.complete);
    return decision.action;
  };
  const first = await Promise.race([gating, early]);
  if (first !== 'early') return { action: finish(first) };
  const rest = gating.then(finish).then(() => undefined);
  // Awaited before the next step's gate; a failure meanwhile must not go unhandled.
  rest.catch(() => {});
  return { action: taken!.action, rest };
}

const roundTest = (t: GateTest): GateTest => ({ ...t, effect: round(t.effect, 6), p: round(t.p, 6) });
