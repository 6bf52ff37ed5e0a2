/**
 * The selection evaluation takes its stopping rule as a policy object: a full evaluation, the
 * gate's early stop, or any other policy, with no change to the evaluation or to the step.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pLimit from 'p-limit';
import { SimEnv } from '../../src/envs/sim/env.ts';
import { ScoreCache } from '../../src/engine/scoring/score-cache.ts';
import { Rollouts } from '../../src/engine/stages/rollout.ts';
import {
  EarlyStop,
  FULL_EVALUATION,
  SelectionEvaluator,
  type EvaluationPolicy,
} from '../../src/engine/stages/selection-eval.ts';
import { SimModel } from '../../src/model/sim/backend.ts';
import { CONVENTIONS } from '../../src/model/sim/rules.ts';
import { EventLog } from '../../src/run/events.ts';

async function evaluator() {
  const env = new SimEnv({ n_train: 5, n_val: 20, n_test: 5, noise: 0, data_seed: 3 });
  const { val } = await env.load();
  const target = new SimModel('sim-1', 42, 0, { harmful: 0, irrelevant: 0, vague: 0, blame: 0 });
  const rollouts = new Rollouts({ env, target, limit: pLimit(4), cache: new ScoreCache() }, 42);
  return new SelectionEvaluator(rollouts, val, { metric: 'hard', mixedWeight: 0.5 }, new EventLog());
}

const WEAK = 'Answer the question.';
const STRONG = CONVENTIONS.map((c) => `- ${c.rules[0]}`).join('\n');

describe('selection evaluation policies', () => {
  it('a full evaluation scores every item', async () => {
    const sel = await evaluator();
    const r = await sel.score(STRONG, { policy: FULL_EVALUATION });
    assert.equal(r.complete, true);
    assert.equal(r.trajectories.filter(Boolean).length, 20);
    assert.equal(r.gate, r.hard);
  });

  it('the early stop ends once the candidate cannot beat the bar, with the bound it reached', async () => {
    const sel = await evaluator();
    const current = await sel.score(STRONG);
    const weak = await sel.score(WEAK, { policy: new EarlyStop(current.gate, STRONG) });
    assert.equal(weak.complete, false);
    assert.ok(weak.gate <= current.gate, `bound ${weak.gate} <= bar ${current.gate}`);
    assert.ok(weak.used < 20, `stopped after ${weak.used} rollouts`);
    assert.equal(weak.hard, null);
  });

  it('takes another policy as it is given: here, stop after five items in reverse order', async () => {
    const sel = await evaluator();
    const seen: number[][] = [];
    const firstFive: EvaluationPolicy = {
      order: (count) => Array.from({ length: count }, (_, i) => count - 1 - i),
      decided: (_sum, scored, remaining) => {
        seen.push([scored, remaining]);
        return scored >= 5;
      },
    };
    const r = await sel.score(STRONG, { policy: firstFive });
    assert.equal(r.complete, false);
    assert.ok(r.trajectories[19] !== undefined, 'the last item ran first');
    assert.ok(
      seen.some(([scored, remaining]) => scored === 5 && remaining === 15),
      'the policy saw the scores in its order',
    );
  });

  it('an early accept says so once the candidate must beat the bar, waits to be let go on, then scores the rest: the result is the full evaluation', async () => {
    const full = await (await evaluator()).score(STRONG);
    const sel = await evaluator();
    const weak = await sel.score(WEAK);
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let told: { low: number; high: number } | undefined;
    let onTold!: () => void;
    const telling = new Promise<'told'>((r) => (onTold = () => r('told')));
    const scoring = sel.score(STRONG, {
      policy: new EarlyStop(weak.gate, WEAK),
      accept: {
        certain: ({ low }) => low > weak.gate,
        decided: (bounds) => {
          told = bounds;
          events.push('decided');
          onTold();
          return held;
        },
      },
    });
    // Told before the evaluation ends, which waits for the release.
    assert.equal(await Promise.race([scoring.then(() => 'finished' as const), telling]), 'told');
    events.push('released');
    release();
    const r = await scoring;
    assert.deepEqual(events, ['decided', 'released']);
    assert.ok(
      told && told.low > weak.gate && told.low <= r.gate && r.gate <= told.high,
      `bounds ${told?.low}..${told?.high} hold ${r.gate}`,
    );
    assert.equal(r.complete, true);
    assert.equal(r.gate, full.gate);
    assert.deepEqual(r.itemValues, full.itemValues);
    assert.equal(r.used + r.cacheHits, 20);
  });

  it('no early accept while the candidate could still fall to the bar', async () => {
    const sel = await evaluator();
    const strong = await sel.score(STRONG);
    let told = false;
    const r = await sel.score(WEAK, {
      accept: {
        certain: ({ low }) => low > strong.gate,
        decided: async () => {
          told = true;
        },
      },
    });
    assert.equal(told, false);
    assert.equal(r.complete, true);
  });
});
