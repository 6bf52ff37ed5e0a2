/**
 * ⑥ Evaluate: the gate scores the candidate on the selection split and decides whether it
 * replaces the skill the step started from. It returns what it decided and, separately, the
 * promise of its full evaluation with everything the step's commit takes into the trainer's
 * state; with a candidate pool, that includes the pool's merge. It changes no state itself.
 */
import path from 'node:path';
import { originId } from '../../run/origins.ts';
import { STEP_ACTION_WORDS } from '../../run/plain-words.ts';
import { round } from '../../util/round.ts';
import { type PoolStep, poolMerge, recordStepCandidate } from '../candidate-pool/pool-steps.ts';
import { applyDecision, scoredSkill, type GateDecision, type SkillState } from '../stages/gate.ts';
import type { SkillPackage } from '../../skill/package/package.ts';
import { type GateOutcome, gateCandidate } from '../stages/gate-evaluation.ts';
import type { GateTest } from '../stages/paired-gate.ts';
import type { StepScope } from './step-scope.ts';
import type { Updated } from './update-stage.ts';
import type { GatePart } from './step-record.ts';
import type { Trajectory } from '../../envs/types.ts';
import { auditRecord, describeReport, isGainCheck } from '../../audit/audit.ts';
import { auditGain } from '../gain-audit.ts';
import { activationMetrics, activationScore, failingQueries, flippedQueries } from '../../envs/triggers/metrics.ts';

/** What a speed-up around the step may ask of its gate (`pipeline/`); a plain step asks nothing. */
export interface GateHooks {
  /** Called once the gate's rollouts are queued: work that may wait behind them starts then. */
  onQueued?: () => void;
  /**
   * Lets the exact gate hand an accept on as soon as it is certain (`evaluation.gate_early_accept`):
   * the rest of its items start once `hold` resolves.
   */
  hold?: Promise<void>;
}

/** The gate's full evaluation and what the commit takes in. */
export interface GateResult {
  outcome: GateOutcome;
  /** The candidate's gate score: a bound when a reject stopped early (`outcome.sel.complete` false). */
  score: number;
  /** Decisions to take into the trainer's state, in order: the candidate's, then a pool merge's. */
  taken: { candidate: SkillState; decision: GateDecision }[];
  /** With a candidate pool: the step's copy of it. */
  pool?: PoolStep;
  /** The gate accepted, and the audit of the accepted gain (`on_flag: reject`) turned it into a reject. */
  auditRejected?: boolean;
}

export interface Gated {
  candidate: SkillPackage;
  decision: GateDecision;
  /** After an early accept: the selection items scored when it was certain. */
  acceptedAfter?: number;
  /** The audit of the accepted gain rejected it (`decision` is then a reject). */
  auditRejected?: boolean;
  /** Resolves once the gate's evaluation is complete (at once, unless it accepted early). */
  result: Promise<GateResult>;
}

type Candidate = Extract<Updated, { candidate: SkillPackage }>;

export async function evaluateStage(s: StepScope, candidate: Candidate, hooks: GateHooks = {}): Promise<Gated> {
  const { selection } = s.ctx;
  const { gate } = s.ctx.settings;
  s.stages.start('evaluate', `selection items=${selection.items.length}`);
  const before = { current: s.reference.score, best: s.state.best.score };
  let early: { decision: GateDecision; items: number } | undefined;
  let told!: () => void;
  const certain = new Promise<'early'>((resolve) => (told = () => resolve('early')));
  const gating = gateCandidate(s.ctx, candidate.candidate, s.reference, s.state.best, {
    rule: gate.on ? 'gate' : 'force',
    dir: path.join(s.files.root, 'selection_eval'),
    step: s.step,
    onQueued: hooks.onQueued,
    // An audit that may reject an accept must see the full evaluation before the accept is handed on.
    early:
      hooks.hold && !s.ctx.audit?.gain?.rejects
        ? (decision, items) => {
            early = { decision, items };
            told();
            return hooks.hold!;
          }
        : undefined,
  });
  const result = gating.then(async (gated) => {
    report(s, gated, before, early?.items);
    const { outcome, auditRejected } = await auditAccepted(s, candidate, gated);
    return { ...(await taking(s, candidate, outcome)), ...(auditRejected ? { auditRejected } : {}) };
  });
  // Awaited by the commit; a failure meanwhile must not go unhandled.
  result.catch(() => {});
  if ((await Promise.race([gating, certain])) === 'early' && early)
    return { candidate: candidate.candidate, decision: early.decision, acceptedAfter: early.items, result };
  const { outcome, auditRejected } = await result;
  return {
    candidate: candidate.candidate,
    decision: outcome.decision,
    ...(auditRejected ? { auditRejected } : {}),
    result,
  };
}

/** An accept's gain through the audit (`gain-audit.ts`); a flag turns it into a reject when `on_flag` is `reject`. */
async function auditAccepted(
  s: StepScope,
  candidate: Candidate,
  outcome: GateOutcome,
): Promise<{ outcome: GateOutcome; auditRejected?: boolean }> {
  if (!outcome.decision.replacesCurrent) return { outcome };
  const report = await auditGain(s, candidate.candidate, outcome.sel, candidate.audit);
  if (!report) return { outcome };
  s.record.audit(auditRecord(report));
  const flagged = report.checks.filter((c) => isGainCheck(c) && c.verdict !== 'pass');
  const rejects = flagged.length > 0 && s.ctx.audit?.gain?.rejects === true;
  const lines = describeReport({ verdict: report.verdict, checks: flagged });
  for (const line of lines) s.ctx.events.warn(`[audit] step ${s.step}: ${line}`);
  if (!rejects) return { outcome };
  s.ctx.events.info(`[audit] step ${s.step}: the accept is turned into a reject (evaluation.audit.on_flag: reject)`);
  return {
    outcome: { ...outcome, decision: { action: 'reject', replacesCurrent: false, newBest: false } },
    auditRejected: true,
  };
}

/** What the commit takes in: the candidate's decision, and with a pool, what the step did with it. */
async function taking(s: StepScope, candidate: Candidate, outcome: GateOutcome): Promise<GateResult> {
  const { sel, decision } = outcome;
  const scored = scoredSkill(candidate.candidate, sel.gate, originId({ kind: 'step', step: s.step }));
  const taken = [{ candidate: scored, decision }];
  if (!s.state.pool) return { outcome, score: sel.gate, taken };
  // The pool keeps the current and the best skill as they are once the decisions are taken.
  const after = { current: s.state.current, best: s.state.best };
  applyDecision(after, scored, decision, s.step);
  const pool: PoolStep = { pool: s.state.pool.copy(), taken, dropped: [] };
  pool.dropped.push(...recordStepCandidate(s, pool.pool, after, candidate, outcome));
  if (s.ctx.settings.pool.merge && decision.replacesCurrent) await poolMerge(s, pool, after);
  return { outcome, score: sel.gate, taken, pool };
}

/** The gate's decision on the event log, the console and the step record. */
function report(
  s: StepScope,
  { sel, decision, test, referenceRollouts }: GateOutcome,
  before: { current: number; best: number },
  acceptedAfter: number | undefined,
): void {
  const { gate } = s.ctx.settings;
  const { selection } = s.ctx;
  const used = sel.used + referenceRollouts;
  s.ctx.events.emit({
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
    ...(acceptedAfter !== undefined ? { accepted_after: acceptedAfter } : {}),
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
    `${STEP_ACTION_WORDS[decision.action]}: candidate ${scored} vs current ${before.current.toFixed(4)}${tested}`,
    { action: decision.action },
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
    ...activationOnGate(sel.trajectories, s.ctx.selection.cachedTrajectories(s.reference.skill)),
  });
}

const known = (ts: (Trajectory | undefined)[]) => ts.filter((t): t is Trajectory => t !== undefined);

/** The candidate's activation on the gate's queries, and against the skill it started from (as far as the score cache has it). */
function activationOnGate(
  candidate: (Trajectory | undefined)[],
  reference: (Trajectory | undefined)[],
): { activation_val?: GatePart['activation_val'] } {
  const m = activationMetrics(known(candidate));
  if (!m) return {};
  const before = activationMetrics(known(reference));
  return {
    activation_val: {
      ...activationScore(m),
      failing: failingQueries(m),
      ...(before ? { flipped: flippedQueries(before, m) } : {}),
    },
  };
}

const roundTest = (t: GateTest): GateTest => ({ ...t, effect: round(t.effect, 6), p: round(t.p, 6) });
