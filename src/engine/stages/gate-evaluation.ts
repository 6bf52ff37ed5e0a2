/**
 * A candidate through the gate: scored on the selection split as far as the decision needs
 * (the exact gate's early stop, or the paired gate's), then decided against the skill it came
 * from (the reference) and the best skill, with the length preference when it is on. Every
 * step candidate, pool merge and gated slow update goes through here.
 */
import { countTokens } from '../../skill/document.ts';
import type { RunContext } from '../context.ts';
import { decide, gateBar, type DecideOptions, type GateDecision, type GateRule, type SkillState } from './gate.ts';
import { pairedAccepts, PairedGate, pairedGateTest, type GateTest, type PairedRule } from './paired-gate.ts';
import { EarlyStop, FULL_EVALUATION, type EvaluationPolicy, type SelectionScore } from './selection-eval.ts';

export interface GateOutcome {
  sel: SelectionScore;
  decision: GateDecision;
  /** The paired gate's test. */
  test?: GateTest;
  /** Selection rollouts run for the reference skill (the paired gate needs its item scores). */
  referenceRollouts: number;
}

type GateContext = Pick<RunContext, 'settings' | 'selection'>;

/** The length preference's token counts, when `evaluation.prefer_shorter_within` is set. */
export function lengthRule(ctx: GateContext, candidate: string, against: { current: string; best: string }): DecideOptions['length'] {
  const within = ctx.settings.gate.shorterWithin;
  if (within === undefined) return undefined;
  return { within, candidate: countTokens(candidate), current: countTokens(against.current), best: countTokens(against.best) };
}

export function pairedRule(ctx: GateContext): PairedRule {
  const { gate } = ctx.settings;
  return { alpha: gate.alpha, minDelta: gate.minDelta, repeats: gate.repeats, binary: gate.scoring.metric === 'hard' && gate.repeats === 1 };
}

/**
 * `rule`: `gate` compares with `reference` (exactly or by the paired test, as configured);
 * `force` takes the candidate at its measured score.
 */
export async function gateCandidate(
  ctx: GateContext,
  candidate: string,
  reference: SkillState,
  best: SkillState,
  options: { rule: Extract<GateRule, 'gate' | 'force'>; dir?: string; step?: number; onQueued?: () => void },
): Promise<GateOutcome> {
  const { gate } = ctx.settings;
  const length = lengthRule(ctx, candidate, { current: reference.skill, best: best.skill });
  const against = { current: reference.score, best: best.score };
  const vsReference = length && { within: length.within, candidate: length.candidate, other: length.current };
  // `onQueued`: called once the candidate's rollouts are queued (what may overlap with them starts then).
  const score = (policy: EvaluationPolicy) => {
    const scoring = ctx.selection.score(candidate, { dir: options.dir, policy, step: options.step });
    options.onQueued?.();
    return scoring;
  };

  if (options.rule === 'force' || gate.kind === 'exact') {
    let policy: EvaluationPolicy = FULL_EVALUATION;
    if (options.rule === 'gate' && gate.earlyStop) {
      const { bar, tieLoses } = gateBar(reference.score, vsReference);
      policy = new EarlyStop(bar, reference.skill, tieLoses);
    }
    const sel = await score(policy);
    return { sel, decision: decide(sel.complete ? sel.gate : undefined, against, options.rule, { length }), referenceRollouts: 0 };
  }

  const rule = pairedRule(ctx);
  const ref = await ctx.selection.score(reference.skill);
  const sel = await score(gate.earlyStop ? new PairedGate(ref.itemValues, rule, vsReference) : FULL_EVALUATION);
  const test = pairedGateTest(ref.itemValues, sel.itemValues, rule, !sel.complete);
  const passed = sel.complete && pairedAccepts(test, vsReference);
  return { sel, decision: decide(sel.complete ? sel.gate : undefined, against, 'gate', { length, passed }), test, referenceRollouts: ref.used };
}
