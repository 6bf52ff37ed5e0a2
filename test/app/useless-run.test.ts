/**
 * Runs that would pay and learn nothing are warned about before they pay: a selection split the
 * initial skill already scores perfectly on (no candidate can pass the gate), and a dry run whose
 * `budget.max_usd` could not hold because a model has no known price.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runTraining } from '../../src/app/train.ts';
import { loadConfig } from '../../src/config/load.ts';
import type { RunEvent } from '../../src/run/events.ts';
import { runCli } from '../helpers/cli.ts';
import { SIM_CONFIG } from '../helpers/train.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { lastUserText, ScriptedModel } from '../envs/scripted.ts';

/** Items "Echo wN" → "wN". */
function project() {
  const dir = tmpDir();
  const line = (n: number) => JSON.stringify({ id: `i${n}`, input: `Echo w${n}`, answer: `w${n}` });
  writeFiles(dir, {
    'train.jsonl': [1, 2, 3, 4].map(line).join('\n'),
    'val.jsonl': [5, 6, 7].map(line).join('\n'),
    'test.jsonl': [8, 9].map(line).join('\n'),
    'c.yaml':
      'model:\n  backend: sim\ntrain: {num_epochs: 1, batch_size: 4}\nenv:\n  name: tasks\n  train_file: train.jsonl\n  val_file: val.jsonl\n  test_file: test.jsonl\n  start_blank: true\n',
  });
  return dir;
}

/** A target right on every item, or only on the training items. */
const target = (valRight: boolean) =>
  new ScriptedModel('fake:echo', (req) => {
    const word = /Echo (w\d+)/.exec(lastUserText(req))![1]!;
    const n = Number(word.slice(1));
    return `<answer>${valRight || n < 5 || n > 7 ? word : 'no idea'}</answer>`;
  });

async function warningsOf(valRight: boolean, overrides: string[] = []): Promise<{ warnings: string[]; steps: number }> {
  const dir = project();
  const events: RunEvent[] = [];
  await runTraining({
    loaded: loadConfig(path.join(dir, 'c.yaml'), { environment: {}, overrides }),
    outRoot: path.join(dir, 'run'),
    configFile: path.join(dir, 'c.yaml'),
    console: false,
    models: { target: target(valRight) },
    onEvent: (e) => events.push(e),
  });
  const baseline = events.findIndex((e) => e.type === 'stage_finished' && e.stage === 'baseline');
  const firstStep = events.findIndex((e) => e.type === 'stage_started' && e.step === 1);
  const warnings = events
    .map((e, i) => ({ e, i }))
    .filter(({ e }) => e.type === 'log' && e.level === 'warn')
    .filter(({ i }) => i > baseline && i < firstStep)
    .map(({ e }) => (e as { message: string }).message);
  return { warnings, steps: firstStep };
}

describe('a run that cannot learn', () => {
  it('a selection split the initial skill already scores perfectly on is warned about after the baseline, before any step', async () => {
    const { warnings } = await warningsOf(true);
    assert.ok(
      warnings.some((w) =>
        /the initial skill already scores 1\.0000 on the 3 selection items \(evaluation\.gate_metric hard\): no candidate can beat it, so the gate will reject every step/.test(
          w,
        ),
      ),
      warnings.join('\n'),
    );
  });

  it('says nothing when the selection split leaves room to learn, or when there is no gate', async () => {
    assert.deepEqual((await warningsOf(false)).warnings, []);
    assert.deepEqual((await warningsOf(true, ['evaluation.use_gate=false'])).warnings, []);
  });

  it('a dry run with budget.max_usd and a model of unknown price says the cap would not hold, and that train refuses it', () => {
    const r = runCli([
      'train',
      '--config',
      SIM_CONFIG,
      '--dry-run',
      '--set',
      'model.backend=openai_compatible',
      '--set',
      'model.target.model=my-model',
      '--set',
      'model.optimizer.model=my-model',
      '--set',
      'budget.max_usd=5',
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Dry run/);
    assert.match(
      r.stderr,
      /warning: budget\.max_usd=5 is set, but the price of model\.target \(my-model\) and model\.optimizer \(my-model\) is unknown.*\(train refuses to start like this\)/,
    );
  });
});
