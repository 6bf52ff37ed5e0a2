/**
 * A candidate through the gate: scored on the selection split as far as the decision needs
 * (the exact gate's early stop, or the paired gate's), then decided against the skill it came
 * from (the reference) and the best skill, with the length preference when it is on. Every
 * step candidate, pool merge and gated slow update goes through here.
 */
import { countTokens } from '../../skill/document.ts';
import { skillText, type Skill } from '../../skill/package/package.ts';
import type { RunContext } from '../context.ts';
import { decide, gateBar, type DecideOptions, type GateDecision, type GateRule, type SkillState } from './gate.ts';
import { pairedAccepts, PairedGate, pairedGateTest, type GateTest, type PairedRule } from './paired-gate.ts';
import {
  EarlyStop,
  FULL_EVALUATION,
  type EarlyAccept,
  type EvaluationPolicy,
  type SelectionScore,
} from './selection-eval.ts';

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
export function lengthRule(
  ctx: GateContext,
  candidate: Skill,
  against: { current: Skill; best: Skill },
): DecideOptions['length'] {
  const within = ctx.settings.gate.shorterWithin;
  if (within === undefined) return undefined;
  return {
    within,
    candidate: countTokens(skillText(candidate)),
    current: countTokens(skillText(against.current)),
    best: countTokens(skillText(against.best)),
  };
}

export function pairedRule(ctx: GateContext): PairedRule {
  const { gate } = ctx.settings;
  return {
    alpha: gate.alpha,
    minDelta: gate.minDelta,
    repeats: gate.repeats,
    binary: gate.scoring.metric === 'hard' && gate.repeats === 1,
  };
}

/** A margin on the bounds, so that a sum taken in another order cannot turn an early decision. */
const EPS = 1e-9;

/**
 * The exact gate's early accept: certain once the least the candidate can score beats the
 * reference, and it is certain whether it beats the best too (no length preference).
 */
function earlyAccept(reference: SkillState, best: SkillState, early: EarlyDecision): EarlyAccept {
  return {
    certain: ({ low, high }) => low > reference.score + EPS && (low > best.score + EPS || high < best.score - EPS),
    decided: ({ low, items }) =>
      early(
        low > best.score + EPS
          ? { action: 'accept_new_best', replacesCurrent: true, newBest: true }
          : { action: 'accept', replacesCurrent: true, newBest: false },
        items,
      ),
  };
}

/** Told an early accept's decision and how many selection items were scored then; resolves when the rest may start. */
export type EarlyDecision = (decision: GateDecision, items: number) => Promise<void>;

/**
 * `rule`: `gate` compares with `reference` (exactly or by the paired test, as configured);
 * `force` takes the candidate at its measured score. `early`: with the exact gate and
 * `evaluation.gate_early_accept`, called as soon as an accept is certain, with the decision the
 * full evaluation will give; the rest of the items are scored once the promise it returns resolves.
 */
export async function gateCandidate(
  ctx: GateContext,
  candidate: Skill,
  reference: SkillState,
  best: SkillState,
  options: {
    rule: Extract<GateRule, 'gate' | 'force'>;
    dir?: string;
    step?: number;
    onQueued?: () => void;
    early?: EarlyDecision;
  },
): Promise<GateOutcome> {
  const { gate } = ctx.settings;
  const length = lengthRule(ctx, candidate, { current: reference, best });
  const against = { current: reference.score, best: best.score };
  const vsReference = length && { within: length.within, candidate: length.candidate, other: length.current };
  // `onQueued`: called once the candidate's rollouts are queued (what may overlap with them starts then).
  const score = (policy: EvaluationPolicy, accept?: EarlyAccept) => {
    const scoring = ctx.selection.score(candidate, { dir: options.dir, policy, step: options.step, accept });
    options.onQueued?.();
    return scoring;
  };

  if (options.rule === 'force' || gate.kind === 'exact') {
    let policy: EvaluationPolicy = FULL_EVALUATION;
    if (options.rule === 'gate' && gate.earlyStop) {
      const { bar, tieLoses } = gateBar(reference.score, vsReference);
      policy = new EarlyStop(bar, reference, tieLoses);
    }
    let told: GateDecision | undefined;
    const tell: EarlyDecision = (decision, items) => {
      told = decision;
      return options.early!(decision, items);
    };
    const accepting =
      options.rule === 'gate' && gate.earlyAccept && options.early && !length
        ? earlyAccept(reference, best, tell)
        : undefined;
    const sel = await score(policy, accepting);
    const decision = decide(sel.complete ? sel.gate : undefined, against, options.rule, { length });
    if (told && told.action !== decision.action)
      throw new Error(`the gate accepted early (${told.action}) but the full evaluation decides ${decision.action}`);
    return { sel, decision, referenceRollouts: 0 };
  }

  const rule = pairedRule(ctx);
  const ref = await ctx.selection.score(reference);
  const sel = await score(gate.earlyStop ? new PairedGate(ref.itemValues, rule, vsReference) : FULL_EVALUATION);
  const test = pairedGateTest(ref.itemValues, sel.itemValues, rule, !sel.complete);
  const passed = sel.complete && pairedAccepts(test, vsReference);
  return {
    sel,
    decision: decide(sel.complete ? sel.gate : undefined, against, 'gate', { length, passed }),
    test,
    referenceRollouts: ref.used,
  };
}
