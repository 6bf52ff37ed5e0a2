/**
 * The simulator's results are pinned: the demo and each ablation or mode write the same
 * `history.json` (byte for byte), summary, runtime state and best skill as when the pinned
 * files were made (`test/fixtures/pinned-sim/make.ts`). A change to the engine that changes
 * what a run does shows up here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PINNED_CASES, pinnedRuntimeState, pinnedSummary } from '../fixtures/pinned-sim/cases.ts';
import { ROOT } from '../helpers/cli.ts';
import { readText, trainSim } from '../helpers/train.ts';
import { readEvents } from '../../src/run/events.ts';
import { StepRecordSchema, isSkipped } from '../../src/run/records.ts';

const PINNED = path.join(ROOT, 'test/fixtures/pinned-sim');
const json = (file: string) => JSON.parse(readText(file)) as Record<string, unknown>;

describe('the simulator runs are pinned', () => {
  for (const [name, overrides] of Object.entries(PINNED_CASES)) {
    it(`${name}${overrides.length ? ` (${overrides.join(' ')})` : ''}`, async () => {
      const { out } = await trainSim(overrides);
      const pinned = path.join(PINNED, name);
      assert.ok(fs.existsSync(pinned), `${pinned} exists`);
      assert.equal(
        readText(path.join(out, 'history.json')),
        readText(path.join(pinned, 'history.json')),
        'history.json',
      );
      assert.deepEqual(
        pinnedSummary(json(path.join(out, 'summary.json'))),
        json(path.join(pinned, 'summary.json')),
        'summary.json',
      );
      assert.deepEqual(
        pinnedRuntimeState(json(path.join(out, 'runtime_state.json'))),
        json(path.join(pinned, 'runtime_state.json')),
        'runtime_state.json',
      );
      assert.equal(
        readText(path.join(out, 'best_skill.md')),
        readText(path.join(pinned, 'best_skill.md')),
        'best_skill.md',
      );

      // Every field of a step record is declared, and each evaluated step says its evaluate stage finished.
      const records = (JSON.parse(readText(path.join(out, 'history.json'))) as unknown[]).map((r, i) => {
        const parsed = StepRecordSchema.safeParse(r);
        assert.ok(parsed.success, `record ${i + 1}: ${parsed.error?.message}`);
        return parsed.data;
      });
      const evaluated = new Set(
        readEvents(path.join(out, 'events.jsonl')).flatMap((e) =>
          e.type === 'stage_finished' && e.stage === 'evaluate' ? [e.step] : [],
        ),
      );
      assert.deepEqual(
        records
          .filter((r) => !isSkipped(r.action))
          .map((r) => r.step)
          .filter((step) => !evaluated.has(step)),
        [],
        'steps without a finished evaluate stage',
      );
    });
  }
});
