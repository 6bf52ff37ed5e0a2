/**
 * A single-document skill (no package files) meets the same simulated world as before skill
 * packages: the same answers and usage from the target, the same replies from the optimizer
 * (`single-document/baseline.json`, made before packages).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { optimizerCases, targetCases } from './single-document/cases.ts';

const baseline = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'single-document/baseline.json'), 'utf8'));

describe('the simulator under a single-document skill', () => {
  it('gives the target answers and usage it gave before packages', async () => {
    assert.deepEqual(await targetCases(), baseline.target);
  });

  it('gives the optimizer replies it gave before packages', async () => {
    assert.deepEqual(JSON.parse(JSON.stringify(await optimizerCases())), baseline.optimizer);
  });
});
