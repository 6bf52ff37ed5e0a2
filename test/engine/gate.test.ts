import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyDecision,
  decide,
  rejectIsCertain,
  type GateDecision,
  type SkillState,
  type SkillStates,
} from '../../src/engine/stages/gate.ts';
import { gateScore, itemMetric, semanticDensity } from '../../src/engine/scoring/means.ts';
import { Rng } from '../../src/util/random.ts';

const scores = (current: number, best: number) => ({ current, best });
const skill = (name: string, score: number) => ({ skill: name, score, origin: name });
const states = (current: number, best: number, bestStep = 0) => ({
  current: skill('current', current),
  best: { ...skill('best', best), step: bestStep },
});

/** The states after `decision` (applied to a copy). */
function after(states: SkillStates, candidate: SkillState, decision: GateDecision, step: number): SkillStates {
  const out = { ...states };
  applyDecision(out, candidate, decision, step);
  return out;
}

describe('gate decision', () => {
  it('accepts a new best, which becomes current and best', () => {
    const d = decide(0.9, scores(0.5, 0.5), 'gate');
    assert.deepEqual(d, { action: 'accept_new_best', replacesCurrent: true, newBest: true });
    assert.deepEqual(after(states(0.5, 0.5), skill('cand', 0.9), d, 7), {
      current: skill('cand', 0.9),
      best: { ...skill('cand', 0.9), step: 7 },
    });
  });

  it('accepts above current but below best without touching best', () => {
    const d = decide(0.6, scores(0.4, 0.8), 'gate');
    assert.deepEqual(d, { action: 'accept', replacesCurrent: true, newBest: false });
    assert.deepEqual(after(states(0.4, 0.8, 2), skill('cand', 0.6), d, 7), {
      current: skill('cand', 0.6),
      best: { ...skill('best', 0.8), step: 2 },
    });
    assert.equal(decide(0.8, scores(0.5, 0.8), 'gate').action, 'accept', 'a tie with best is not a new best');
  });

  it('rejects below or equal to current (strict), and after an early stop', () => {
    for (const score of [0.3, 0.5, undefined]) {
      const d = decide(score, scores(0.5, 0.5), 'gate');
      assert.deepEqual(d, { action: 'reject', replacesCurrent: false, newBest: false });
      assert.deepEqual(after(states(0.5, 0.5, 1), skill('cand', score ?? 0), d, 7), states(0.5, 0.5, 1));
    }
  });

  it('force-accepts with the gate off, tracking best by strict improvement', () => {
    const worse = decide(0.3, scores(0.5, 0.5), 'force');
    assert.deepEqual(after(states(0.5, 0.5, 1), skill('cand', 0.3), worse, 7), {
      current: skill('cand', 0.3),
      best: { ...skill('best', 0.5), step: 1 },
    });
    assert.equal(worse.action, 'force_accept');
    const better = decide(0.6, scores(0.3, 0.5), 'force');
    assert.deepEqual(after(states(0.3, 0.5, 1), skill('cand', 0.6), better, 8), {
      current: skill('cand', 0.6),
      best: { ...skill('cand', 0.6), step: 8 },
    });
  });

  it('promotes the current skill to best only above the best, keeping the current score', () => {
    const remeasured = { skill: 'current', score: 0.7, origin: 'current' };
    const d = decide(0.7, scores(0.4, 0.6), 'promote');
    assert.deepEqual(d, { action: 'accept_new_best', replacesCurrent: false, newBest: true });
    assert.deepEqual(after(states(0.4, 0.6, 3), remeasured, d, 9), {
      current: skill('current', 0.4),
      best: { ...remeasured, step: 9 },
    });
    assert.equal(decide(0.6, scores(0.4, 0.6), 'promote').action, 'reject');
  });

  it('keeps current equal to best when starting equal (every acceptance is a new best)', () => {
    const s = states(0, 0);
    [0.1, 0.5, 0.4, 0.7].forEach((c, i) => {
      const d = decide(c, scores(s.current.score, s.best.score), 'gate');
      assert.ok(d.action === 'accept_new_best' || d.action === 'reject');
      applyDecision(s, skill(`v${i}`, c), d, i + 1);
      assert.equal(s.current.score, s.best.score);
    });
    assert.equal(s.best.score, 0.7);
    assert.equal(s.best.step, 4);
  });
});

describe('gate metrics', () => {
  it('projects hard, soft and mixed, clamping the weight', () => {
    assert.equal(itemMetric(1, 0, 'hard', 0.5), 1);
    assert.equal(itemMetric(1, 0.2, 'soft', 0.5), 0.2);
    assert.equal(itemMetric(1, 0, 'mixed', 0.5), 0.5);
    assert.ok(Math.abs(itemMetric(0.8, 0.4, 'mixed', 0.25) - 0.7) < 1e-12);
    assert.equal(itemMetric(0.8, 0.4, 'mixed', 5), 0.4);
    assert.equal(itemMetric(0.8, 0.4, 'mixed', -2), 0.8);
  });

  it('semantic density as the reference examples', () => {
    assert.equal(semanticDensity('Always check the inputs and never mix up proxy values.'), 0.2);
    assert.equal(semanticDensity('   '), 0);
    assert.equal(semanticDensity('check that we resolve it', ['check', 'resolve']), 0.4);
    assert.ok(
      Math.abs(
        semanticDensity('Always check inputs.\n<!-- SLOW_UPDATE_START -->\nNEVER MUST\n<!-- SLOW_UPDATE_END -->') -
          1 / 3,
      ) < 1e-12,
    );
    const trajectories = Array.from({ length: 5 }, (_, i) => ({ hard: i < 4 ? 1 : 0, soft: 1 }));
    const withBonus = gateScore(trajectories, 'Always check the inputs and never mix up proxy values.', {
      metric: 'hard',
      mixedWeight: 0.5,
      density: { weight: 0.1 },
    });
    assert.ok(Math.abs(withBonus - 0.82) < 1e-12);
  });

  it('leaves infrastructure errors out of the score', () => {
    assert.equal(
      gateScore(
        [
          { hard: 1, soft: 1 },
          { hard: 0, soft: 0, error: { kind: 'timeout', message: 'x' } },
        ],
        '',
        { metric: 'hard', mixedWeight: 0.5 },
      ),
      1,
    );
  });
});

describe('early stopping gives the full evaluation decision', () => {
  it('on many random cases, in random completion orders, with errors and mixed metrics', () => {
    const rng = new Rng(12345);
    let stoppedEarly = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const n = rng.int(1, 40);
      const metric = rng.pick(['hard', 'soft', 'mixed'] as const);
      const items = Array.from({ length: n }, () => {
        const hard = rng.chance(0.5) ? 1 : 0;
        return {
          hard,
          soft: rng.chance(0.3) ? hard : rng.float(),
          error: rng.chance(0.05) ? { kind: 'timeout', message: '' } : undefined,
        };
      });
      const bonus = rng.chance(0.3) ? rng.float() * 0.1 : 0;
      const scoring = { metric, mixedWeight: 0.5 };
      const full = gateScore(items, '', scoring) + bonus;
      // A bar close to the candidate's score, to make the decision hard.
      const bar = rng.chance(0.5) ? full + (rng.float() - 0.5) * 0.2 : rng.pick([full, 0, 1]);
      const fullDecision = decide(full, scores(bar, bar), 'gate').action;
      const order = rng.shuffle(items.map((_, i) => i));
      let sum = 0;
      let scored = 0;
      let seen = 0;
      let stopped = false;
      for (const i of order) {
        if (rejectIsCertain(sum, scored, n - seen, bar, bonus)) {
          stopped = true;
          break;
        }
        const t = items[i]!;
        seen++;
        if (t.error) continue;
        scored++;
        sum += itemMetric(t.hard, t.soft, metric, 0.5);
      }
      if (stopped) {
        stoppedEarly++;
        assert.equal(fullDecision, 'reject', `trial ${trial}: stopped early but a full evaluation accepts`);
      }
    }
    assert.ok(stoppedEarly > 300, `early stopping happened in ${stoppedEarly} trials`);
  });
});
