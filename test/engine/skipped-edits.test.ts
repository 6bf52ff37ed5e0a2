/**
 * A step whose edits change nothing is skipped before the gate: the console says how many edits
 * were skipped and why, the event log records it, and no selection rollout is spent on a
 * candidate that is the current skill.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readEvents } from '../../src/run/events.ts';
import { formatEvent } from '../../src/run/reporter.ts';
import { trainSim } from '../helpers/train.ts';

describe('a step whose update changes nothing', () => {
  it('is skipped with its reasons, and its candidate is not evaluated', async () => {
    // A skill limit the simulator's edits soon exceed: later steps' edits are all skipped.
    const run = await trainSim(['evaluation.use_gate=false', 'train.seed=1', 'optimizer.max_skill_tokens=220']);
    const unchanged = run.history.filter((r) => r.action === 'skip_no_change');
    assert.ok(unchanged.length > 0, `some step changed nothing: ${run.history.map((r) => r.action).join(', ')}`);
    const events = readEvents(path.join(run.out, 'events.jsonl'));
    for (const r of unchanged) {
      assert.match(String(r.skip_reason), /^every edit was skipped \(\d+ over the token limit\)$/);
      assert.equal(r.current_score, run.history.find((h) => h.step === r.step - 1)?.current_score ?? r.current_score);
      assert.equal(r.gate, undefined, `step ${r.step} has no gate record`);
      assert.ok(
        !fs.existsSync(path.join(run.out, 'steps', `step_${String(r.step).padStart(4, '0')}`, 'selection_eval')),
      );
      assert.ok(
        !events.some((e) => e.type === 'stage_started' && e.stage === 'evaluate' && e.step === r.step),
        `step ${r.step} did not start its gate`,
      );
      const skipped = events.find((e) => e.type === 'edits_skipped' && e.step === r.step);
      assert.ok(skipped && skipped.type === 'edits_skipped', `step ${r.step} recorded the skipped edits`);
      assert.equal(skipped.skipped, skipped.total);
      assert.match(formatEvent(skipped) ?? '', /^ {4}\[update\] (\d+) of \1 edits? skipped: \1 over the token limit$/);
    }
  });
});
