/**
 * The paired gate (`evaluation.gate: paired`): a one-sided paired test of the candidate against
 * the skill it came from, on the same selection items, stopping once the test can no longer
 * pass. On a noisy simulated target the exact gate takes harmful edits and neutral ones by
 * chance; the paired gate does not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide } from '../../src/engine/stages/gate.ts';
import { gateCandidate } from '../../src/engine/stages/gate-evaluation.ts';
import { pairedAccepts, PairedGate, pairedGateTest, type PairedRule } from '../../src/engine/stages/paired-gate.ts';
import { readEvents } from '../../src/run/events.ts';
import { StepRecordSchema } from '../../src/run/records.ts';
import { Rng } from '../../src/util/random.ts';
import { trainSim } from '../helpers/train.ts';
import { gateContext, HARMFUL, NEUTRAL, STRONG } from '../helpers/gate.ts';
import path from 'node:path';

const RULE: PairedRule = { alpha: 0.05, minDelta: 0, repeats: 1, binary: true };

/** How often each gate takes `candidate` over STRONG on a noisy target, over `seeds` seeds. */
async function acceptances(
  candidate: string,
  seeds: number,
  evaluation: Record<string, unknown> = {},
): Promise<{ exact: number; paired: number }> {
  const counts = { exact: 0, paired: 0 };
  for (let seed = 0; seed < seeds; seed++) {
    for (const gate of ['exact', 'paired'] as const) {
      const ctx = await gateContext({ gate, ...evaluation }, 0.1, seed);
      const current = await ctx.selection.score(STRONG);
      const reference = { skill: STRONG, score: current.gate, origin: 'current' };
      const out = await gateCandidate(ctx, candidate, reference, reference, { rule: 'gate' });
      if (out.decision.replacesCurrent) counts[gate]++;
    }
  }
  return counts;
}

describe('the paired test', () => {
  it("McNemar's exact test on 0/1 item scores, one-sided, with the effect per item", () => {
    const current = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1];
    const candidate = [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1];
    const t = pairedGateTest(current, candidate, RULE);
    assert.equal(t.method, 'mcnemar_exact');
    assert.deepEqual(t.discordant, { current_only: 1, candidate_only: 9 });
    assert.ok(Math.abs(t.p - 11 / 1024) < 1e-12);
    assert.ok(Math.abs(t.effect - 8 / 12) < 1e-12);
    assert.equal(t.passed, true);
    assert.equal(pairedGateTest(candidate, current, RULE).passed, false, 'worse: no pass');
    assert.equal(
      pairedGateTest(current, candidate, { ...RULE, minDelta: 0.7 }).passed,
      false,
      'below the minimum effect',
    );
    assert.equal(pairedGateTest(current, candidate, { ...RULE, alpha: 0.01 }).passed, false, 'not significant at 0.01');
  });

  it('items scored for one skill only are left out; fractional scores take the paired t-test', () => {
    const t = pairedGateTest([0.2, 0.3, undefined, 0.4, 0.1], [0.5, 0.6, 0.9, 0.8, undefined], RULE);
    assert.equal(t.method, 'paired_t');
    assert.equal(t.n, 3);
    assert.ok(Math.abs(t.effect - 1 / 3) < 1e-12);
    // Every item gained the same: no variance, a certain gain.
    assert.equal(pairedGateTest([0.2, 0.3], [0.4, 0.5], RULE).p, 0);
    assert.equal(pairedGateTest([0.2, 0.3], [0.2, 0.3], RULE).p, 1);
  });

  it('with the length preference, within the tolerance the shorter skill wins', () => {
    const within = { within: 0.02 };
    assert.equal(
      pairedAccepts({ passed: false, effect: -0.01 }, { ...within, candidate: 90, other: 100 }),
      true,
      'shorter and no worse than the tolerance',
    );
    assert.equal(pairedAccepts({ passed: false, effect: -0.03 }, { ...within, candidate: 90, other: 100 }), false);
    assert.equal(
      pairedAccepts({ passed: true, effect: 0.01 }, { ...within, candidate: 110, other: 100 }),
      false,
      'longer must gain more than the tolerance',
    );
    assert.equal(pairedAccepts({ passed: true, effect: 0.05 }, { ...within, candidate: 110, other: 100 }), true);
    assert.equal(pairedAccepts({ passed: true, effect: 0.01 }, undefined), true);
  });
});

describe('the paired gate stops early with the decision a full evaluation gives', () => {
  it('on many random cases, 0/1 and fractional, with missing items, minimum effects and length preferences', () => {
    const rng = new Rng(2024);
    let stopped = 0;
    let trials = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const n = rng.int(1, 40);
      const binary = rng.chance(0.6);
      const value = () => (rng.chance(0.04) ? undefined : binary ? (rng.chance(0.5) ? 1 : 0) : rng.float());
      const reference = Array.from({ length: n }, value);
      const lift = rng.float() * 0.6;
      const candidate = reference.map((r) =>
        rng.chance(0.04)
          ? undefined
          : binary
            ? rng.chance(0.5 + lift / 2)
              ? 1
              : 0
            : Math.min(1, (r ?? rng.float()) + (rng.float() - 0.4) * lift),
      );
      const rule: PairedRule = {
        alpha: rng.pick([0.05, 0.1, 0.2]),
        minDelta: rng.pick([0, 0, 0.05, 0.2]),
        repeats: 1,
        binary,
      };
      const length = rng.chance(0.3)
        ? { within: rng.pick([0, 0.02, 0.1]), candidate: rng.int(90, 110), other: 100 }
        : undefined;
      const full = pairedAccepts(pairedGateTest(reference, candidate, rule), length);
      const policy = new PairedGate(reference, rule, length);
      const sequence = policy.order(n);
      const known: (number | undefined)[] = [];
      trials++;
      for (const i of sequence) {
        if (policy.decided(0, 0, n - known.length, 0, known)) {
          stopped++;
          assert.equal(full, false, `trial ${trial}: stopped early but a full evaluation accepts`);
          break;
        }
        known.push(candidate[i]);
      }
    }
    assert.ok(stopped > trials / 10, `stopped early in ${stopped} of ${trials} trials`);
  });

  it("runs the reference's failures first", () => {
    const policy = new PairedGate([1, 0, undefined, 0.5, 0], RULE);
    assert.deepEqual(policy.order(5), [1, 4, 3, 0, 2]);
  });
});

describe('on a noisy simulated target', () => {
  it('the exact gate takes a harmful edit on some seeds; the paired gate on none', async () => {
    const { exact, paired } = await acceptances(HARMFUL, 40);
    assert.ok(exact >= 2, `exact gate accepted the harmful edit on ${exact} of 40 seeds`);
    assert.equal(paired, 0, `paired gate accepted the harmful edit on ${paired} of 40 seeds`);
  });

  it('an edit that changes nothing: the exact gate takes it often, the paired gate about as often as alpha', async () => {
    const { exact, paired } = await acceptances(NEUTRAL, 40);
    assert.ok(exact >= 8, `exact gate accepted a neutral edit on ${exact} of 40 seeds`);
    assert.ok(paired <= 4, `paired gate accepted a neutral edit on ${paired} of 40 seeds (alpha 0.05)`);
  });

  it('repeated samples: each item is scored as the mean of gate_repeats samples, and those samples differ', async () => {
    const ctx = await gateContext({ gate: 'paired', gate_repeats: 3 }, 0.1, 1);
    const r = await ctx.selection.score(STRONG);
    assert.equal(r.trajectories.length, 90);
    assert.equal(r.used, 90);
    assert.ok(
      r.itemValues.some((v) => v !== undefined && v > 0 && v < 1),
      'some item scored between 0 and 1: its samples differ',
    );
    const again = await ctx.selection.score(STRONG);
    assert.equal(again.used, 0, 'every sample comes from the score cache the second time');
    assert.equal(again.gate, r.gate);
  });

  it('the decision of decide() under the paired verdict: a pass replaces the comparison with the current score', () => {
    assert.equal(decide(0.5, { current: 0.6, best: 0.7 }, 'gate', { passed: true }).action, 'accept');
    assert.equal(decide(0.8, { current: 0.6, best: 0.7 }, 'gate', { passed: false }).action, 'reject');
    assert.equal(decide(0.8, { current: 0.6, best: 0.7 }, 'gate', { passed: true }).action, 'accept_new_best');
  });
});

describe('training with the paired gate', () => {
  it('records each decision with its test (method, effect, p-value) in history.json and the events; the default run records none', async () => {
    const { history, out, summary } = await trainSim([
      'evaluation.gate=paired',
      'evaluation.gate_repeats=2',
      'model.target.options.noise=0.1',
      'train.num_epochs=2',
    ]);
    assert.ok(summary.test_hard !== undefined, 'the run finished');
    const evaluated = history.filter((r) => r.gate);
    assert.ok(evaluated.length > 0);
    for (const r of evaluated) {
      assert.ok(StepRecordSchema.safeParse(r).success, `step ${r.step}: a valid record`);
      const test = r.gate!.test!;
      assert.equal(test.kind, 'paired');
      assert.equal(test.repeats, 2);
      assert.ok(test.p >= 0 && test.p <= 1);
      // An accepted candidate passed its test; a rejected one did not.
      assert.equal(test.passed, r.action !== 'reject', `step ${r.step}: ${r.action} with passed=${test.passed}`);
    }
    const decisions = readEvents(path.join(out, 'events.jsonl')).filter((e) => e.type === 'gate_decision');
    assert.equal(decisions.length, evaluated.length);
    assert.ok(decisions.every((e) => e.type === 'gate_decision' && e.test && typeof e.test.p === 'number'));

    const exact = await trainSim(['train.num_epochs=1']);
    assert.ok(
      exact.history.every((r) => r.gate === undefined || r.gate.test === undefined),
      'the exact gate records no test',
    );
  });
});
