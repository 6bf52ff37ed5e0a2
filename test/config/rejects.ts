import assert from 'node:assert/strict';
import { ConfigError } from '../../src/errors.ts';

/** Runs `fn`, which must throw a ConfigError whose message matches every pattern; returns it. */
export function rejects(fn: () => unknown, ...patterns: RegExp[]): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    for (const p of patterns) assert.match(err.message, p);
    return err;
  }
  assert.fail('expected an error');
}
