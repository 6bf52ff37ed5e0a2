import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readJson } from '../../src/run/atomic.ts';
import { readText, trainSim } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

const LEAKY = ['model.optimizer.options.leak=1', 'train.num_epochs=1'];
const leakRule = /For "[^"]+" the answer is /;

describe('the audit in training', () => {
  it('rejects before the gate every candidate that memorised an item, naming the item, and keeps the honest edits of other steps', async () => {
    const audited = await trainSim(LEAKY);
    const skips = audited.history.filter((h) => h.action === 'skip_audit');
    assert.ok(skips.length > 0, `actions: ${audited.history.map((h) => h.action).join(', ')}`);
    for (const h of skips) {
      assert.equal(h.audit?.verdict, 'fail');
      assert.match(h.skip_reason ?? '', /carries \d+ items? of the data/);
      assert.equal(h.gate, undefined, 'never scored');
      const report = readJson<{ checks: { check: string; findings: { item: string; edit?: { op: string } }[] }[] }>(
        path.join(audited.out, 'steps', `step_${String(h.step).padStart(4, '0')}`, 'audit.json'),
      )!;
      const leak = report.checks.find((c) => c.check === 'leak')!;
      assert.ok(leak.findings.length > 0);
      assert.ok(leak.findings.every((f) => /^train-\d{4}$|^val-\d{4}$|^test-\d{4}$/.test(f.item)));
      assert.ok(
        leak.findings.some((f) => f.edit?.op === 'append'),
        'the leaking edit is named',
      );
    }
    assert.doesNotMatch(readText(path.join(audited.out, 'best_skill.md')), leakRule);
    const audit = audited.summary.audit as { best: { verdict: string } };
    assert.equal(audit.best.verdict, 'pass');

    // Without the audit, the same optimizer's leaks are scored, and some reach the kept skill.
    const open = await trainSim([...LEAKY, 'evaluation.audit.checks=[]']);
    assert.equal(open.history.filter((h) => h.action === 'skip_audit').length, 0);
    assert.equal(open.summary.audit, undefined);
    assert.match(readText(path.join(open.out, 'best_skill.md')), leakRule);
  });

  it('warns instead when asked to, and the best skill audit reports the leak', async () => {
    const warned = await trainSim([...LEAKY, 'evaluation.audit.on_fail=warn']);
    assert.equal(warned.history.filter((h) => h.action === 'skip_audit').length, 0);
    assert.ok(warned.history.some((h) => h.audit?.verdict === 'fail'));
    if (leakRule.test(readText(path.join(warned.out, 'best_skill.md')))) {
      const audit = warned.summary.audit as { best: { verdict: string } };
      assert.equal(audit.best.verdict, 'fail');
      assert.ok(fs.existsSync(path.join(warned.out, 'best_skill_audit.json')));
    }
  });

  it('seals the test figures: a second run of the same skills shows them without scoring the test split, a re-score is recorded', async () => {
    const seals = tmpDir('skillopt-seals-');
    const common = ['train.num_epochs=1', `evaluation.audit.seal_dir=${seals}`];
    const first = await trainSim(common);
    const notes = (first.summary.audit as { test_seals: Record<string, { status: string; key: string }> }).test_seals;
    assert.equal(notes.best!.status, 'sealed');
    assert.equal(notes.initial!.status, 'sealed');
    assert.ok(fs.existsSync(path.join(seals, `${notes.best!.key}.json`)));

    const second = await trainSim(common);
    const shown = (second.summary.audit as { test_seals: Record<string, { status: string; sealed_by: string }> })
      .test_seals;
    assert.equal(shown.best!.status, 'shown');
    assert.equal(shown.best!.sealed_by, first.out);
    assert.equal(second.summary.test_hard, first.summary.test_hard);
    const testCalls = (out: string) =>
      readText(path.join(out, 'calls.jsonl'))
        .split('\n')
        .filter((l) => l.includes('"final evaluation"')).length;
    assert.ok(testCalls(first.out) > 0);
    assert.equal(
      fs.existsSync(path.join(second.out, 'test_eval', 'trajectories.jsonl')),
      false,
      'the test split was not scored again',
    );

    const third = await trainSim([...common, 'evaluation.audit.rescore_test=true']);
    const again = (third.summary.audit as { test_seals: Record<string, { status: string; hard: number }> }).test_seals;
    assert.equal(again.best!.status, 'rescored');
    const seal = readJson<{ hard: number; rescored: { run: string; hard: number }[] }>(
      path.join(seals, `${notes.best!.key}.json`),
    )!;
    assert.deepEqual(
      seal.rescored.map((r) => r.run),
      [third.out],
    );
    assert.equal(seal.hard, first.summary.test_hard);
  });
});
