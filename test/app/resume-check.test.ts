/** What a resume may change: a key a later version added is at its default in a run that never had it. */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { trainingChanges } from '../../src/app/resume-check.ts';
import { SIM_CONFIG } from '../helpers/train.ts';

/** The stored config of a run, without the keys an earlier version did not have. */
function storedBefore(config: unknown, drop: string[]): unknown {
  const copy = JSON.parse(JSON.stringify(config)) as Record<string, Record<string, unknown>>;
  for (const key of drop) {
    const parts = key.split('.');
    let at: Record<string, unknown> = copy;
    for (const p of parts.slice(0, -1)) at = at[p] as Record<string, unknown>;
    delete at[parts.at(-1)!];
  }
  return copy;
}

describe('resuming a run of an earlier version', () => {
  const NEW_KEYS = ['evaluation.gate', 'evaluation.gate_repeats', 'optimizer.pool_size', 'model.target.options.noise'];

  it('keys it did not have, now at their defaults, are no change', () => {
    const { config, secretPaths } = loadConfig(SIM_CONFIG, { environment: {} });
    assert.deepEqual(trainingChanges(storedBefore(config, NEW_KEYS), config, secretPaths), []);
  });

  it('a key it did not have, now set to something else, is a change', () => {
    const { config: before } = loadConfig(SIM_CONFIG, { environment: {} });
    const { config, secretPaths } = loadConfig(SIM_CONFIG, { environment: {}, overrides: ['evaluation.gate=paired', 'model.target.options.noise=0.2'] });
    const changes = trainingChanges(storedBefore(before, NEW_KEYS), config, secretPaths);
    assert.deepEqual(changes.sort(), ['evaluation.gate: "exact" -> "paired"', 'model.target.options.noise: 0 -> 0.2']);
  });
});
