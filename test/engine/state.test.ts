import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { UserError } from '../../src/errors.ts';
import { RunDir } from '../../src/run/layout.ts';
import { readEvents } from '../../src/run/events.ts';
import { runCli } from '../helpers/cli.ts';
import { NO_GAIN_AUDIT, readText, SIM_CONFIG, SMALL_SIM, trainSim, type SimRun } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

// Two epochs of two steps: stops before and after an epoch boundary are both reachable.
// The budget stops below fall at chosen points of the run: the audit of accepted gains (its calls) stays off.
const SMALL = [...SMALL_SIM, NO_GAIN_AUDIT];

/** history.json without what each step paid (a resumed step pays less). */
const historyOf = (out: string) =>
  (JSON.parse(readText(path.join(out, 'history.json'))) as Record<string, unknown>[]).map(
    ({ tokens: _t, gate, ...r }) => {
      const {
        rollouts_used: _u,
        rollouts_saved: _s,
        cache_hits: _c,
        ...decision
      } = (gate ?? {}) as Record<string, unknown>;
      return { ...r, gate: decision };
    },
  );

describe('a broken runtime_state.json', () => {
  let reference: SimRun;
  before(async () => {
    reference = await trainSim(SMALL);
  });

  // Budget stops (checked before every call): after step 1; inside epoch 1's boundary (its slow
  // update saved, the boundary not complete); after step 3 (mid epoch 2); after step 4 with epoch
  // 2's boundary done.
  for (const [maxCalls, broken, what] of [
    [50, '{"last_completed_step": 1, "current_sk', 'torn'],
    [70, '{}', 'an empty object, inside a boundary'],
    [90, '{}', 'an empty object'],
    [110, 'null', 'null'],
  ] as const) {
    it(`(${what}) is rebuilt from the history and the skill files, said so, and the run ends as an uninterrupted one (stop after ${maxCalls} calls)`, async () => {
      const out = path.join(tmpDir(), 'run');
      const stopped = await trainSim([...SMALL, `budget.max_calls=${maxCalls}`], out);
      assert.equal(stopped.outcome.status, 'stopped');
      const file = path.join(out, 'runtime_state.json');
      const committed = JSON.parse(readText(file));
      fs.writeFileSync(file, broken);

      const dir = new RunDir(out);
      assert.match(dir.runtimeStateProblem() ?? '', /is (unreadable|not a valid run state)/);
      const rebuilt = dir.readRuntimeState()!;
      // Inside a boundary the saved current skill is the slow update's; the journals give the state
      // of the step before it, and the resume runs the boundary again from the recorded calls.
      const inBoundary =
        !String(committed.current_origin).startsWith('step_') && committed.current_origin !== 'initial_skill';
      const compared = [
        'last_completed_step',
        'best_score',
        'best_step',
        'best_origin',
        'best_skill_hash',
        'scheduler',
        ...(inBoundary ? [] : ['current_score', 'current_origin']),
      ] as const;
      for (const key of compared) {
        assert.deepEqual(rebuilt[key], committed[key], key);
      }
      assert.equal(
        readText(rebuilt.best_skill_path!),
        readText(path.join(out, 'best_skill.md')),
        'the committed best skill',
      );

      const resumed = await trainSim([...SMALL, 'budget.max_calls=0'], out);
      assert.equal(resumed.outcome.status, 'finished');
      const warnings = readEvents(path.join(out, 'events.jsonl'))
        .filter((e) => e.type === 'log' && e.level === 'warn')
        .map((e) => (e as { message: string }).message);
      assert.ok(
        warnings.some(
          (m) =>
            m.includes(file) &&
            m.includes(`rebuilt from ${path.join(out, 'history.json')}`) &&
            m.includes(`resuming after step ${committed.last_completed_step}`),
        ),
        warnings.join('\n'),
      );
      assert.deepEqual(historyOf(out), historyOf(reference.out));
      assert.equal(readText(path.join(out, 'best_skill.md')), readText(path.join(reference.out, 'best_skill.md')));
      for (const k of [
        'baseline_selection_hard',
        'best_selection_hard',
        'baseline_test_hard',
        'test_hard',
        'final_test_hard',
        'total_steps',
      ]) {
        assert.deepEqual(resumed.summary[k], reference.summary[k], k);
      }
    });
  }

  it('an empty state still gets the changed-config check', async () => {
    const out = path.join(tmpDir(), 'run');
    await trainSim([...SMALL, 'budget.max_calls=50'], out);
    fs.writeFileSync(path.join(out, 'runtime_state.json'), '{}');
    const changed = runCli([
      'train',
      '--config',
      SIM_CONFIG,
      '--out',
      out,
      '--cfg-options',
      ...SMALL,
      'train.batch_size=5',
    ]);
    assert.equal(changed.status, 2, changed.stdout);
    assert.match(changed.stderr, /different config \(train\.batch_size: 10 -> 5\)/);
  });

  it('that cannot be rebuilt stops the run with the file and what is wrong, and changes nothing', async () => {
    const out = path.join(tmpDir(), 'run');
    // Without the overlap, so that the cap stops the run after step 3.
    await trainSim([...SMALL, 'evaluation.gate_overlap=false', 'budget.max_calls=90'], out);
    const file = path.join(out, 'runtime_state.json');
    fs.writeFileSync(file, '{"last_completed_step": "three"}');
    fs.rmSync(path.join(out, 'skills', 'skill_v0003.md'));
    const before = readText(path.join(out, 'history.json'));
    await assert.rejects(trainSim(SMALL, out), (e: unknown) => {
      assert.ok(e instanceof UserError);
      assert.match(
        e.message,
        new RegExp(
          `^${file.replace(/[.]/g, '\\.')} is not a valid run state \\(last_completed_step: .*\\), and the run cannot be rebuilt`,
        ),
      );
      assert.match(e.message, /skill_v0003\.md, the skill after step 3, is missing/);
      return true;
    });
    assert.equal(readText(file), '{"last_completed_step": "three"}');
    assert.equal(readText(path.join(out, 'history.json')), before);
  });
});

describe('a run directory that was moved', () => {
  it('resumes from its own files, not from the paths written in its state', async () => {
    const first = path.join(tmpDir(), 'here');
    await trainSim([...SMALL, 'budget.max_calls=70'], first);
    const moved = path.join(tmpDir(), 'there');
    fs.renameSync(first, moved);
    const resumed = await trainSim([...SMALL, 'budget.max_calls=0'], moved);
    assert.equal(resumed.outcome.status, 'finished');
  });
});
