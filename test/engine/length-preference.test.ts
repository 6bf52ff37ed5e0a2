/**
 * Skill length as an objective (`evaluation.prefer_shorter_within`): when two skills score within
 * the tolerance, the shorter one wins, at the gate, for the best skill and in the early stop.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { beats, decide, gateBar, rejectIsCertain } from '../../src/engine/stages/gate.ts';
import { gateCandidate } from '../../src/engine/stages/gate-evaluation.ts';
import { Rng } from '../../src/util/random.ts';
import { gateContext, NEUTRAL as LONGER, STRONG } from '../helpers/gate.ts';
import { readText, trainSim } from '../helpers/train.ts';
import { countTokens } from '../../src/skill/document.ts';
import { isAccepted } from '../../src/run/records.ts';
import type { LengthPoint } from '../../src/engine/length-report.ts';
import fs from 'node:fs';
import path from 'node:path';

describe('the length preference', () => {
  it('within the tolerance the shorter skill wins; outside it the higher score does', () => {
    const shorter = { within: 0.05, candidate: 90, other: 100 };
    const longer = { within: 0.05, candidate: 110, other: 100 };
    assert.equal(beats(0.56, 0.6, shorter), true, 'shorter, 0.04 lower');
    assert.equal(beats(0.54, 0.6, shorter), false, 'shorter, 0.06 lower');
    assert.equal(beats(0.64, 0.6, longer), false, 'longer, 0.04 higher');
    assert.equal(beats(0.66, 0.6, longer), true, 'longer, 0.06 higher');
    assert.equal(
      beats(0.6, 0.6, { within: 0.05, candidate: 100, other: 100 }),
      false,
      'same length: strictly higher, as without it',
    );
    assert.equal(beats(0.6, 0.6), false);
    const length = { within: 0.05, candidate: 90, current: 100, best: 80 };
    assert.deepEqual(
      decide(0.58, { current: 0.6, best: 0.6 }, 'gate', { length }),
      { action: 'accept', replacesCurrent: true, newBest: false },
      'shorter than the current, longer than the best',
    );
  });

  it('the early stop under it gives the decision a full evaluation gives', () => {
    const rng = new Rng(77);
    let stopped = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const n = rng.int(1, 30);
      const values: number[] = Array.from({ length: n }, () => (rng.chance(0.5) ? 1 : 0));
      const full = values.reduce((a, b) => a + b, 0) / n;
      const current = full + (rng.float() - 0.5) * 0.3;
      const length = { within: rng.pick([0, 0.02, 0.1]), candidate: rng.int(95, 105), other: 100 };
      const accepts = beats(full, current, length);
      const { bar, tieLoses } = gateBar(current, length);
      let sum = 0;
      for (let k = 0; k < n; k++) {
        if (rejectIsCertain(sum, k, n - k, bar, 0, tieLoses)) {
          stopped++;
          assert.equal(accepts, false, `trial ${trial}: stopped early but a full evaluation accepts`);
          break;
        }
        sum += values[k]!;
      }
    }
    assert.ok(stopped > 300, `stopped early in ${stopped} trials`);
  });

  it('on the simulator: a shorter skill that scores the same is taken only with the preference; a longer one never', async () => {
    for (const [within, takesShorter] of [
      [undefined, false],
      [0, true],
      [0.05, true],
    ] as const) {
      const ctx = await gateContext(within === undefined ? {} : { prefer_shorter_within: within });
      const longer = { skill: LONGER, score: (await ctx.selection.score(LONGER)).gate, origin: 'current' };
      const shorter = { skill: STRONG, score: (await ctx.selection.score(STRONG)).gate, origin: 'current' };
      assert.equal(longer.score, shorter.score, 'the padding changes nothing the target does');
      const toShorter = await gateCandidate(ctx, STRONG, longer, longer, { rule: 'gate' });
      assert.equal(
        toShorter.decision.replacesCurrent,
        takesShorter,
        `prefer_shorter_within=${within}: shorter candidate`,
      );
      assert.equal(toShorter.decision.newBest, takesShorter, 'and it becomes the best');
      const toLonger = await gateCandidate(ctx, LONGER, shorter, shorter, { rule: 'gate' });
      assert.equal(toLonger.decision.replacesCurrent, false, `prefer_shorter_within=${within}: longer candidate`);
    }
  });
});

describe('the score-against-length report', () => {
  it('lists the initial skill and every skill taken in, with its score and length, the best marked once', async () => {
    const { out, history, summary } = await trainSim([
      'optimizer.learning_rate=1',
      'optimizer.min_learning_rate=1',
      'evaluation.prefer_shorter_within=0.02',
    ]);
    const points = JSON.parse(readText(path.join(out, 'score_vs_length.json'))) as LengthPoint[];
    assert.equal(points[0]!.origin, 'initial_skill');
    const slowTaken = fs
      .readdirSync(path.join(out, 'slow_update'))
      .map((e) => JSON.parse(readText(path.join(out, 'slow_update', e, 'slow_result.json'))) as { action: string })
      .filter((r) => isAccepted(r.action)).length;
    assert.equal(points.length, 1 + history.filter((r) => isAccepted(r.action)).length + slowTaken);
    assert.ok(slowTaken > 0, 'a slow update was taken in');
    for (const p of points.filter((q) => q.origin.startsWith('step_'))) {
      const skill = readText(path.join(out, 'steps', `step_${String(p.step).padStart(4, '0')}`, 'candidate_skill.md'));
      assert.equal(p.tokens, countTokens(skill), `${p.origin}: its tokens`);
      assert.equal(p.score, history.find((r) => r.step === p.step)!.current_score);
    }
    assert.equal(points.filter((p) => p.best).length, 1);
    assert.equal(points.find((p) => p.best)!.score, summary.best_selection_hard);
  });
});
