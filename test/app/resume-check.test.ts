/** Which settings a resume may change, for settings added after a run was started. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { trainingChanges } from '../../src/app/resume-check.ts';
import { loadConfig } from '../../src/config/load.ts';
import { SIM_CONFIG } from '../helpers/train.ts';

const config = (overrides: string[] = []) => loadConfig(SIM_CONFIG, { overrides, environment: {} }).config;

/** The stored config of a run started before `gradient.merge_strategy` and `evaluation.gate_overlap` existed. */
function storedBefore(): unknown {
  const stored = JSON.parse(JSON.stringify(config())) as { gradient: Record<string, unknown>; evaluation: Record<string, unknown> };
  delete stored.gradient.merge_strategy;
  delete stored.evaluation.gate_overlap;
  return stored;
}

describe('resuming a run started before a setting existed', () => {
  it('counts the missing merge strategy as the staged one, which that run used', () => {
    assert.deepEqual(trainingChanges(storedBefore(), config(['gradient.merge_strategy=staged']), new Set()), []);
    assert.deepEqual(trainingChanges(storedBefore(), config(), new Set()), ['gradient.merge_strategy: "staged" -> "combined"']);
  });

  it('lets the gate overlap be switched on or off: it changes no decision', () => {
    assert.deepEqual(trainingChanges(storedBefore(), config(['gradient.merge_strategy=staged', 'evaluation.gate_overlap=true']), new Set()), []);
  });
});
