/**
 * Cost per task as an objective (`evaluation.cost_weight`): the gate compares score − weight ×
 * cost, so of two skills that score alike the cheaper one wins, and the early stop, which reads
 * the score alone, still gives the decision a full evaluation gives.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigSchema } from '../../src/config/schema.ts';
import { preflight } from '../../src/config/preflight.ts';
import { UserError } from '../../src/errors.ts';
import { costPenalty, gateScore, type GateScoring } from '../../src/engine/scoring/means.ts';
import { trainSettings } from '../../src/engine/settings.ts';
import { gateCandidate } from '../../src/engine/stages/gate-evaluation.ts';
import { rejectIsCertain } from '../../src/engine/stages/gate.ts';
import { Rng } from '../../src/util/random.ts';
import { gateContext, NEUTRAL as LONGER, STRONG } from '../helpers/gate.ts';

const usage = (input: number, output: number) => ({ input, output, cached: 0, reasoning: 0 });
const rollout = (hard: number, input: number, output: number, error = false) => ({
  id: 'x',
  hard,
  soft: hard,
  usage: usage(input, output),
  ...(error ? { error: { kind: 'server', message: 'down' } } : {}),
});

describe('the cost objective', () => {
  it('takes the weight times the mean cost of a scored rollout off the score, in tokens or dollars', () => {
    const ts = [rollout(1, 1500, 500), rollout(0, 500, 500), rollout(1, 99_000, 0, true)];
    const tokens: GateScoring = { metric: 'hard', mixedWeight: 0.5, cost: { weight: 0.01, unit: 'ktokens' } };
    // Scored: 2,000 and 1,000 tokens, a mean of 1.5 thousand; the failed rollout counts for neither.
    assert.ok(Math.abs(costPenalty(ts, tokens) - 0.015) < 1e-12);
    assert.ok(Math.abs(gateScore(ts, '', tokens) - (0.5 - 0.015)) < 1e-12);
    const dollars: GateScoring = {
      metric: 'hard',
      mixedWeight: 0.5,
      cost: { weight: 10, unit: 'usd', price: { input: 2, output: 8 } },
    };
    // (1500·2 + 500·8)/1e6 = $0.007 and (500·2 + 500·8)/1e6 = $0.005: a mean of $0.006, times 10.
    assert.ok(Math.abs(costPenalty(ts, dollars) - 0.06) < 1e-12);
    const plain: GateScoring = { metric: 'hard', mixedWeight: 0.5 };
    assert.equal(costPenalty(ts, plain), 0);
    assert.equal(gateScore(ts, '', plain), 0.5);
  });

  it('the early stop, reading the score alone, never rejects what a full evaluation with the cost accepts', () => {
    const rng = new Rng(91);
    let stopped = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const n = rng.int(1, 30);
      const weight = rng.pick([0.001, 0.01, 0.05]);
      const ts = Array.from({ length: n }, () =>
        rollout(rng.chance(0.5) ? 1 : 0, rng.int(100, 4000), rng.int(10, 500)),
      );
      const scoring: GateScoring = { metric: 'hard', mixedWeight: 0.5, cost: { weight, unit: 'ktokens' } };
      const full = gateScore(ts, '', scoring);
      const current = full + (rng.float() - 0.5) * 0.3;
      let sum = 0;
      for (let k = 0; k < n; k++) {
        if (rejectIsCertain(sum, k, n - k, current, 0, true)) {
          stopped++;
          assert.ok(full <= current, `trial ${trial}: stopped early but a full evaluation accepts`);
          break;
        }
        sum += ts[k]!.hard;
      }
    }
    assert.ok(stopped > 300, `stopped early in ${stopped} trials`);
  });

  it('on the simulator: of two skills that score alike, the cheaper is taken only with the cost weighed', async () => {
    for (const [weight, takesCheaper] of [
      [0, false],
      [0.01, true],
    ] as const) {
      for (const earlyStop of [true, false]) {
        const ctx = await gateContext({ cost_weight: weight, gate_early_stop: earlyStop });
        const longerScore = await ctx.selection.score(LONGER);
        const shorterScore = await ctx.selection.score(STRONG);
        assert.equal(longerScore.hard, shorterScore.hard, 'the padding changes nothing the target does');
        if (weight) assert.ok(shorterScore.gate > longerScore.gate, 'the shorter prompt costs less');
        const longer = { skill: LONGER, score: longerScore.gate, origin: 'current' };
        const shorter = { skill: STRONG, score: shorterScore.gate, origin: 'current' };
        const toCheaper = await gateCandidate(ctx, STRONG, longer, longer, { rule: 'gate' });
        assert.equal(toCheaper.decision.replacesCurrent, takesCheaper, `cost_weight=${weight}: cheaper candidate`);
        assert.equal(toCheaper.decision.newBest, takesCheaper);
        const toDearer = await gateCandidate(ctx, LONGER, shorter, shorter, { rule: 'gate' });
        assert.equal(toDearer.decision.replacesCurrent, false, `cost_weight=${weight}: dearer candidate`);
      }
    }
  });

  it('is refused where it cannot hold: the paired gate, the early accept, dollars without a price', () => {
    const sizes = { train: 10, val: 10, test: 10 };
    const refused = (evaluation: Record<string, unknown>, pattern: RegExp) =>
      assert.throws(
        () => preflight(ConfigSchema.parse({ evaluation: { cost_weight: 0.01, ...evaluation } }), sizes),
        (e) => e instanceof UserError && pattern.test(e.message),
      );
    refused({ gate: 'paired' }, /cost_weight is set and evaluation\.gate is paired/);
    refused({ gate_early_accept: true }, /cost_weight and evaluation\.gate_early_accept/);
    assert.throws(
      () =>
        trainSettings(
          ConfigSchema.parse({
            evaluation: { cost_weight: 1, cost_unit: 'usd' },
            model: { target: { backend: 'openai_compatible', model: 'my-local-model' } },
          }),
        ),
      (e) =>
        e instanceof UserError &&
        /cost_unit is usd: the price of model\.target \(my-local-model\) is unknown/.test(e.message),
    );
    const priced = trainSettings(
      ConfigSchema.parse({
        evaluation: { cost_weight: 1, cost_unit: 'usd' },
        model: { target: { backend: 'openai_compatible', model: 'my-local-model', price: { input: 1, output: 2 } } },
      }),
    );
    assert.deepEqual(priced.gate.scoring.cost, { weight: 1, unit: 'usd', price: { input: 1, output: 2 } });
  });
});
