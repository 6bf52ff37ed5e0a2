/**
 * A run whose history.json was torn (a disk filled, a copy cut short): the resume rebuilds it
 * from the steps' own records and says so; when a record it needs is gone too, the command says
 * which file is broken and what to move aside, before it writes anything, instead of advising
 * the same resume that failed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { readEvents } from '../../src/run/events.ts';
import { runCli } from '../helpers/cli.ts';
import {
  historyOf,
  NO_GAIN_AUDIT,
  readText,
  SIM_CONFIG,
  SMALL_SIM,
  snapshot,
  trainSim,
  type SimRun,
} from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

// Without the gate overlap and the audit of accepted gains (their calls), so that the call cap stops the run after step 3.
const SMALL = [...SMALL_SIM, 'evaluation.gate_overlap=false', NO_GAIN_AUDIT];

/** Cuts a file to half its length, as a write cut short leaves it. */
function tear(file: string): void {
  const text = readText(file);
  fs.writeFileSync(file, text.slice(0, Math.floor(text.length / 2)));
}

describe('a torn history.json', () => {
  let reference: SimRun;
  before(async () => {
    reference = await trainSim(SMALL);
  });

  it('is rebuilt from the step records, said so, and the run ends as an uninterrupted one', async () => {
    const out = path.join(tmpDir(), 'run');
    const stopped = await trainSim([...SMALL, 'budget.max_calls=90'], out);
    assert.equal(stopped.outcome.status, 'stopped');
    const history = path.join(out, 'history.json');
    tear(history);
    const resumed = await trainSim([...SMALL, 'budget.max_calls=0'], out);
    assert.equal(resumed.outcome.status, 'finished');
    const warnings = readEvents(path.join(out, 'events.jsonl'))
      .filter((e) => e.type === 'log' && e.level === 'warn')
      .map((e) => (e as { message: string }).message);
    assert.ok(
      warnings.some(
        (m) => m.startsWith(`${history} is unreadable`) && /rebuilt from the records of steps 1 to 3/.test(m),
      ),
      warnings.join('\n'),
    );
    assert.equal(historyOf(out), historyOf(reference.out));
    assert.equal(readText(path.join(out, 'best_skill.md')), readText(path.join(reference.out, 'best_skill.md')));
  });

  it('that cannot be rebuilt names the files and what to move aside, exits 2 and writes nothing', async () => {
    const out = path.join(tmpDir(), 'run');
    await trainSim([...SMALL, 'budget.max_calls=90'], out);
    const history = path.join(out, 'history.json');
    tear(history);
    const record = path.join(out, 'steps', 'step_0002', 'step_record.json');
    fs.rmSync(record);
    const before = snapshot(out);
    const r = runCli(['train', '--config', SIM_CONFIG, '--resume', out, '--cfg-options', ...SMALL]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`^skillopt: ${history.replace(/[.]/g, '\\.')} is unreadable \\(`));
    assert.match(r.stderr, new RegExp(`${record.replace(/[.]/g, '\\.')}, which would rebuild it, is missing`));
    assert.match(r.stderr, new RegExp(`move the run directory aside \\(mv ${out} ${out}\\.broken\\) to start again`));
    assert.doesNotMatch(r.stdout + r.stderr, /To resume/);
    assert.deepEqual(snapshot(out), before, 'nothing written');
  });
});
