/**
 * SpreadsheetBench trains end to end in `multi` mode: the release and its id manifest written by
 * the test, materialised, the real engine and env, both models on a fake OpenAI-compatible
 * server on 127.0.0.1 (spreadsheet-responder.ts). The target writes formulas until the skill or
 * the feedback says otherwise; training rollouts are told which cells are wrong, evaluations are
 * not, so only a skill that states the rule passes the test split.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/app/train.ts';
import { materialize } from '../../src/envs/materialize.ts';
import '../../src/builtins.ts';
import { ROOT } from '../helpers/cli.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { makeManifest, makeRelease, type TaskSpec } from '../helpers/spreadsheet-release.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { COUNT, spreadsheetResponder, TOTAL, VALUES_RULE } from './spreadsheet-responder.ts';

type Rows = [number, number][];
const header = { A1: 'item', B1: 'amount', C1: 'extra' };
const cells = (rows: Rows) =>
  Object.fromEntries(
    rows.flatMap(([a, b], i) => [
      [`A${i + 2}`, a],
      [`B${i + 2}`, b],
    ]),
  );
const totalCase = (rows: Rows) => ({
  input: { Data: { ...header, ...cells(rows) } },
  gold: { Data: { ...header, ...cells(rows), ...Object.fromEntries(rows.map(([a, b], i) => [`C${i + 2}`, a + b])) } },
});
const countCase = (rows: Rows) => ({
  input: { Data: { ...header, ...cells(rows) } },
  gold: { Data: { ...header, ...cells(rows), E1: rows.filter(([, b]) => b > 10).length } },
});

const TASKS: TaskSpec[] = [
  {
    id: 't-total',
    instruction: TOTAL,
    answer_position: "'Data'!C2:C4",
    layout: 'original',
    cases: [
      totalCase([
        [1, 2],
        [3, 4],
        [5, 6],
      ]),
      totalCase([
        [7, 1],
        [0, 0],
        [2, 9],
      ]),
    ],
  },
  {
    id: 't-count',
    instruction: COUNT,
    answer_position: 'E1',
    answer_sheet: 'Data',
    layout: 'verified',
    cases: [
      countCase([
        [1, 12],
        [2, 3],
        [3, 40],
      ]),
    ],
  },
  {
    id: 'v-total',
    instruction: TOTAL,
    answer_position: "'Data'!C2:C3",
    layout: 'bare',
    cases: [
      totalCase([
        [4, 4],
        [6, 1],
      ]),
    ],
  },
  {
    id: 'x-total',
    instruction: TOTAL,
    answer_position: "'Data'!C2:C3",
    layout: 'verified',
    answer_sheet: 'Data',
    cases: [
      totalCase([
        [10, 20],
        [30, 40],
      ]),
    ],
  },
  {
    id: 'x-count',
    instruction: COUNT,
    answer_position: "'Data'!E1",
    layout: 'original',
    cases: [
      countCase([
        [1, 11],
        [2, 11],
      ]),
      countCase([
        [1, 1],
        [2, 50],
      ]),
    ],
  },
];

const readJson = (f: string) => JSON.parse(fs.readFileSync(f, 'utf8'));
const readLines = (f: string) =>
  fs
    .readFileSync(f, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
type Entry = { role?: string; content?: string };

describe('SpreadsheetBench trains end to end', () => {
  let fake: FakeProvider;
  before(async () => {
    fake = await startFakeProvider({ respond: (r) => spreadsheetResponder(r.body) });
  });
  after(() => fake.close());

  /** The release, its splits and a config over them; `env` adds to the config's env section. */
  async function setUp(env = ''): Promise<{ dir: string; root: string; config: string }> {
    const dir = tmpDir('skillopt-sheet-train-');
    const root = path.join(dir, 'spreadsheetbench_verified_400');
    const records = makeRelease(root, TASKS);
    const byId = (id: string) => records.find((r) => r.id === id)!;
    makeManifest(path.join(dir, 'manifest'), {
      train: [byId('t-total'), byId('t-count')],
      val: [byId('v-total')],
      test: [byId('x-total'), byId('x-count')],
    });
    const splits = path.join(dir, 'splits');
    await materialize({ benchmark: 'spreadsheetbench', raw: root, manifest: path.join(dir, 'manifest'), out: splits });
    writeFiles(dir, {
      'c.yaml': [
        `_base_: ${path.join(ROOT, 'configs/spreadsheetbench/default.yaml')}`,
        `model:\n  backend: openai_compatible\n  target:\n    model: fake-coder\n    base_url: ${fake.url}/v1\n    max_retries: 0\n  optimizer:\n    model: fake-optimizer\n    base_url: ${fake.url}/v1\n    max_retries: 0\n  reasoning_effort: ""`,
        'train:\n  num_epochs: 1\n  batch_size: 2\n  train_size: 0',
        'gradient:\n  minibatch_size: 2\n  merge_batch_size: 2\n  analyst_workers: 2',
        'optimizer:\n  learning_rate: 2\n  min_learning_rate: 1\n  use_slow_update: false\n  use_meta_skill: false',
        'cache:\n  mode: off',
        `env:\n  split_dir: ${splits}\n  data_root: ${root}\n  skill_init: ${path.join(ROOT, 'configs/spreadsheetbench/seed_skill.md')}\n  max_turns: 4\n  workers: 4${env}`,
      ].join('\n'),
    });
    return { dir, root, config: path.join(dir, 'c.yaml') };
  }

  it('multi mode: the target fixes its code after feedback in training; the learned rule carries the test split', async () => {
    const { dir } = await setUp();
    const loaded = loadConfig(path.join(dir, 'c.yaml'), { environment: {} });
    const out = path.join(dir, 'run');
    const outcome = await runTraining({
      loaded,
      outRoot: out,
      configFile: path.join(dir, 'c.yaml'),
      console: false,
      environment: {},
    });
    assert.equal(outcome.status, 'finished');
    const summary = readJson(path.join(out, 'summary.json'));
    assert.equal(summary.baseline_test_hard, 0, 'formulas read as empty: the seed skill fails the test split');
    assert.equal(summary.test_hard, 1, 'the learned rule passes it');
    assert.ok(fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8').includes(VALUES_RULE));

    // Training rollouts: an error fed back, then the wrong cells with the target's own values only.
    const train = readLines(path.join(out, 'steps/step_0001/rollout/results.jsonl'));
    assert.deepEqual(train.map((t) => [t.id, t.hard]).sort(), [
      ['t-count', 1],
      ['t-total', 1],
    ]);
    const count = train.find((t) => t.id === 't-count')!.conversation as Entry[];
    const fed = count
      .filter((e) => e.role === 'user')
      .slice(1)
      .map((e) => e.content!);
    assert.equal(fed.length, 2);
    assert.match(fed[0]!, /^Your script failed when it ran:[\s\S]*Worksheet Sheet1 does not exist/);
    assert.match(
      fed[1]!,
      /^Your script ran, but some of the cells the task checks hold wrong values:\n {2}Data!E1: your value = \(empty\) \(wrong\)\n/,
    );
    assert.doesNotMatch(fed[1]!, /expected|\b2\b/, 'the golden count (2) is not given');
    assert.match(
      count.at(-1)!.content!,
      /^\[POST-EXECUTION VERIFICATION\]\nCase 1: PASS\n {2}Data!E1: got=2, expected=2 ✓/,
    );

    // Evaluation rollouts: errors are fed back, wrong cells are not.
    const baseline = readLines(path.join(out, 'test_eval_baseline/results.jsonl'));
    for (const t of baseline) {
      const users = (t.conversation as Entry[]).filter((e) => e.role === 'user').map((e) => e.content!);
      assert.ok(
        !users.some((u) => /your value/.test(u)),
        `${t.id}: an evaluation rollout was told which cells are wrong`,
      );
      assert.equal(t.hard, 0);
    }
    assert.match(
      baseline.find((t) => t.id === 'x-count')!.fail_reason,
      /^eval-mismatch: Data!E1: got \(empty\), expected 2/,
    );
    // The target's requests carried the skill; the optimizer read the verification reports.
    const bodies = fake.requests.map((r) => r.body);
    assert.ok(
      bodies.some(
        (b) => b.model === 'fake-coder' && /## Skill\n\n# Spreadsheet Editing with Python/.test(b.messages[0].content),
      ),
    );
    const analyst = bodies.find((b) => b.response_format?.json_schema?.name?.startsWith('analyst_'));
    assert.match(JSON.stringify(analyst.messages), /POST-EXECUTION VERIFICATION/);
  });

  it('without a Python that can run the scripts, the run stops before any model call', async () => {
    const { dir, config } = await setUp('\n  python: /nowhere/python3');
    fake.requests.length = 0;
    const loaded = loadConfig(config, { environment: {} });
    await assert.rejects(
      runTraining({ loaded, outRoot: path.join(dir, 'run'), configFile: config, console: false, environment: {} }),
      /SpreadsheetBench needs Python 3 with openpyxl and pandas; env\.python names \/nowhere\/python3 \(not found\)/,
    );
    assert.equal(fake.requests.length, 0);
    assert.equal(fs.existsSync(path.join(dir, 'run')), false, 'and writes nothing');
  });
});
