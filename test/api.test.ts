/**
 * The library API from its entry point (`src/index.ts`; test/package.test.ts imports the packed
 * package by its name).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { evaluate, loadConfig, readEvents, train, type RunEvent } from '../src/index.ts';
import { SIM_CONFIG } from './helpers/train.ts';
import { tmpDir } from './helpers/tmp.ts';

describe('the library API', () => {
  it('trains with overrides, passing every event to the callback, then evaluates the initial and best skills', async () => {
    const root = tmpDir('skillopt-api-');
    const out = path.join(root, 'run');
    const seen: RunEvent[] = [];
    const outcome = await train({
      config: SIM_CONFIG,
      out,
      overrides: ['train.num_epochs=1', 'evaluation.gate=paired'],
      environment: {},
      onEvent: (e) => seen.push(e),
    });
    assert.equal(outcome.status, 'finished');
    const written = readEvents(path.join(out, 'events.jsonl'));
    // The file keeps a progress event a second at most; the callback sees every one.
    const settled = (events: RunEvent[]) =>
      events.filter((e) => e.type !== 'stage_progress').map((e) => JSON.stringify(e));
    assert.deepEqual(settled(seen), settled(written), 'the callback saw each event written, in order');
    assert.ok(
      seen.filter((e) => e.type === 'stage_progress').length >=
        written.filter((e) => e.type === 'stage_progress').length,
    );
    const decisions = seen.filter((e) => e.type === 'gate_decision');
    assert.equal(decisions.length, 3, 'one gate decision per step of the one epoch');
    assert.ok(
      decisions.every((e) => e.type === 'gate_decision' && e.test !== undefined),
      'the override took: the paired gate decided',
    );
    assert.equal(loadConfig(SIM_CONFIG, { environment: {} }).config.evaluation.gate, 'exact');

    const summary = await evaluate({
      config: SIM_CONFIG,
      skills: [path.join(path.dirname(SIM_CONFIG), 'seed_skill.md'), path.join(out, 'best_skill.md')],
      out: path.join(root, 'eval'),
      environment: {},
    });
    assert.equal(summary.comparisons.length, 1);
    assert.ok(fs.existsSync(path.join(root, 'eval', 'eval_summary.json')));
    const [initial, best] = summary.cells;
    assert.ok(best!.hard > initial!.hard, `best ${best!.hard} over initial ${initial!.hard}`);
  });
});
