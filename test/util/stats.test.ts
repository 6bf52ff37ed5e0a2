import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { mcnemarGreater, meanInterval, pairedTest, wilson } from '../../src/util/stats.ts';
import { TS_IMPORT } from '../helpers/cli.ts';

const close = (a: number, b: number, eps = 1e-3) => assert.ok(Math.abs(a - b) < eps, `${a} vs ${b}`);

describe('confidence intervals', () => {
  it('Wilson for 0/1 scores, with known values and the edges', () => {
    const w = wilson(8, 10);
    close(w.low, 0.4902);
    close(w.high, 0.9433);
    const all = wilson(10, 10);
    assert.equal(all.high, 1);
    close(all.low, 0.7225);
    assert.equal(wilson(0, 5).low, 0);
    assert.equal(meanInterval([1, 0, 1, 1, 1, 1, 1, 1, 0, 1])!.method, 'wilson');
  });
  it("Student's t for fractional scores, clamped to [0, 1]", () => {
    const i = meanInterval([0.2, 0.4, 0.6, 0.8])!;
    assert.equal(i.method, 't');
    close(i.low, 0.0892);
    close(i.high, 0.9108);
    assert.deepEqual(meanInterval([0.5, 0.5, 0.5]), { low: 0.5, high: 0.5, method: 'degenerate' });
    assert.equal(meanInterval([0.95, 0.99, 0.2])!.high, 1);
    assert.equal(meanInterval([1]), undefined);
  });
});

describe('paired test', () => {
  it("McNemar's exact test on 0/1 scores", () => {
    const base = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1];
    const cand = [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1];
    const t = pairedTest(base, cand);
    assert.equal(t.method, 'mcnemar_exact');
    assert.deepEqual(t.discordant, { baseline_only: 1, candidate_only: 9 });
    close(t.p!, 0.021484375, 1e-12);
    close(t.diff, 8 / 12);
    assert.equal(pairedTest([1, 0, 1], [1, 0, 1]).p, 1, 'no discordant pair');
  });
  it('paired t on fractional scores', () => {
    const t = pairedTest([0.4, 0.4, 0.4], [0.5, 0.6, 0.7]);
    assert.equal(t.method, 'paired_t');
    close(t.diff, 0.2);
    close(t.p!, 0.0742);
    assert.ok(t.ci![0] < 0.2 && t.ci![1] > 0.2);
    assert.equal(pairedTest([0.2, 0.3], [0.4, 0.5]).p, null, 'constant differences: no p-value');
    assert.equal(pairedTest([], []).method, 'none');
    assert.throws(() => pairedTest([1], [1, 0]), /same length/);
  });
  it('one-sided, that the candidate is better (the training gate): half the two-sided p in its favour, near 1 against it', () => {
    const base = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1];
    const cand = [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1];
    // P(X >= 9) for X ~ Binomial(10, 1/2) = 11/1024.
    close(pairedTest(base, cand, { alternative: 'greater' }).p!, 11 / 1024, 1e-12);
    close(pairedTest(cand, base, { alternative: 'greater' }).p!, 1 - 1 / 1024, 1e-12);
    assert.equal(mcnemarGreater(3, 0), 1);
    assert.equal(mcnemarGreater(0, 0), 1);
    close(mcnemarGreater(0, 5), 1 / 32, 1e-12);
    close(pairedTest([0.4, 0.4, 0.4], [0.5, 0.6, 0.7], { alternative: 'greater' }).p!, 0.0742 / 2);
    assert.ok(pairedTest([0.5, 0.6, 0.7], [0.4, 0.4, 0.4], { alternative: 'greater' }).p! > 0.95);
  });
});

describe('loading', () => {
  it('loads the statistics packages at the first test, not at import (a run reaches its first model call without them)', () => {
    const probe = [
      "import Module from 'node:module';",
      "const loaded = () => Object.keys(Module._cache).filter((k) => k.includes('/@stdlib/')).length;",
      `const stats = await import(${JSON.stringify(pathToFileURL(path.resolve(import.meta.dirname, '../../src/util/stats.ts')).href)});`,
      'const atImport = loaded();',
      'stats.meanInterval([0.2, 0.5, 0.7]);',
      'stats.mcnemarGreater(1, 3);',
      'console.log(JSON.stringify({ atImport, afterUse: loaded() }));',
    ].join('\n');
    const r = spawnSync(process.execPath, [...TS_IMPORT, '--input-type=module', '-e', probe], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const { atImport, afterUse } = JSON.parse(r.stdout) as { atImport: number; afterUse: number };
    assert.equal(atImport, 0);
    assert.ok(afterUse > 0, 'the check sees the packages once loaded');
  });
});
