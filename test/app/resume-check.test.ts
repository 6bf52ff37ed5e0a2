/** What a resume may change: a key a later version added counts at the value that does what the run did (its default, unless named otherwise). */
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
    const { config, secretPaths } = loadConfig(SIM_CONFIG, {
      environment: {},
      overrides: ['evaluation.gate=paired', 'model.target.options.noise=0.2'],
    });
    const changes = trainingChanges(storedBefore(before, NEW_KEYS), config, secretPaths);
    assert.deepEqual(changes.sort(), ['evaluation.gate: "exact" -> "paired"', 'model.target.options.noise: 0 -> 0.2']);
  });
});

const configWith = (overrides: string[] = []) => loadConfig(SIM_CONFIG, { overrides, environment: {} }).config;

/** The stored config of a run started before `gradient.merge_strategy` and `evaluation.gate_overlap` existed. */
function storedBeforeMergeStrategy(): unknown {
  const stored = JSON.parse(JSON.stringify(configWith())) as {
    gradient: Record<string, unknown>;
    evaluation: Record<string, unknown>;
  };
  delete stored.gradient.merge_strategy;
  delete stored.evaluation.gate_overlap;
  return stored;
}

describe('resuming a run started before a setting existed', () => {
  it('counts the missing merge strategy as the staged one, which that run used', () => {
    assert.deepEqual(
      trainingChanges(storedBeforeMergeStrategy(), configWith(['gradient.merge_strategy=staged']), new Set()),
      [],
    );
    assert.deepEqual(trainingChanges(storedBeforeMergeStrategy(), configWith(), new Set()), [
      'gradient.merge_strategy: "staged" -> "combined"',
    ]);
  });

  it('lets the gate overlap be switched on or off: it changes no decision', () => {
    assert.deepEqual(
      trainingChanges(
        storedBeforeMergeStrategy(),
        configWith(['gradient.merge_strategy=staged', 'evaluation.gate_overlap=true']),
        new Set(),
      ),
      [],
    );
  });

  it('lets the seal directory and the re-scoring of sealed test figures change, not what the audit rejects', () => {
    const stored = JSON.parse(JSON.stringify(configWith()));
    const changed = (overrides: string[]) => trainingChanges(stored, configWith(overrides), new Set());
    assert.deepEqual(changed(['evaluation.audit.seal_dir=/elsewhere', 'evaluation.audit.rescore_test=true']), []);
    assert.deepEqual(changed(['evaluation.audit.on_fail=warn']), ['evaluation.audit.on_fail: "reject" -> "warn"']);
  });
});
