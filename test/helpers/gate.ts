/** A gate on the simulator's selection split, built from `evaluation.*` settings, for tests of the gate alone. */
import pLimit from 'p-limit';
import { ConfigSchema } from '../../src/config/schema.ts';
import { SimEnv } from '../../src/envs/sim/env.ts';
import { ScoreCache } from '../../src/engine/scoring/score-cache.ts';
import { trainSettings } from '../../src/engine/settings.ts';
import { Rollouts } from '../../src/engine/stages/rollout.ts';
import { SelectionEvaluator } from '../../src/engine/stages/selection-eval.ts';
import { SimModel } from '../../src/model/sim/backend.ts';
import { CONVENTIONS } from '../../src/model/sim/rules.ts';
import { EventLog } from '../../src/run/events.ts';

/** A skill stating every convention: the simulated target gets every solvable item right. */
export const STRONG = CONVENTIONS.map((c) => `- ${c.rules[0]}`).join('\n');
/** Breaks every measurement answer the strong skill gets right: a harmful edit. */
export const HARMFUL = `${STRONG}\n- Attach the unit directly to the number.`;
/** Changes nothing the simulated target acts on (and the skill stays short enough to be read whole). */
export const NEUTRAL = `${STRONG}\n- Be concise and professional.`;

/** The settings and selection evaluator of a gate on 30 selection items, the target's `noise` and run `seed` as given. */
export async function gateContext(evaluation: Record<string, unknown>, noise = 0, seed = 42) {
  const env = new SimEnv({ n_train: 5, n_val: 30, n_test: 5, noise: 0, data_seed: 3 });
  const { val } = await env.load();
  const target = new SimModel('sim-1', seed, 0, { harmful: 0, irrelevant: 0, vague: 0, blame: 0 }, noise);
  const settings = trainSettings(ConfigSchema.parse({ evaluation }));
  const rollouts = new Rollouts({ env, target, limit: pLimit(8), cache: new ScoreCache() }, seed);
  const selection = new SelectionEvaluator(rollouts, val, settings.gate.scoring, new EventLog(), settings.gate.repeats);
  return { settings, selection };
}
