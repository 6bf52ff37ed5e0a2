import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.ts';
import { materialize } from '../../src/envs/materialize.ts';
import '../../src/builtins.ts';
import { createEnv } from '../../src/envs/build.ts';
import { planRun } from '../../src/app/plan.ts';
import { planInputFor } from '../../src/app/plan-input.ts';
import { findCases } from '../../src/envs/spreadsheetbench/cases.ts';
import type { SpreadsheetBenchEnv } from '../../src/envs/spreadsheetbench/env.ts';
import { extractCode } from '../../src/envs/spreadsheetbench/report.ts';
import { runScript } from '../../src/envs/spreadsheetbench/sandbox.ts';
import { compareOutputs } from '../../src/envs/spreadsheetbench/workbooks.ts';
import type { Item, Trajectory } from '../../src/envs/types.ts';
import { UserError } from '../../src/errors.ts';
import { HarnessChatModel } from '../../src/model/harness/harness-model.ts';
import type { AgentHarness } from '../../src/model/harness/types.ts';
import type { ChatRequest } from '../../src/model/types.ts';
import { makeManifest, makeRelease, type TaskSpec } from '../helpers/spreadsheet-release.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { makeWorkbooks, testPython } from '../helpers/workbooks.ts';
import { lastUserText, ScriptedModel } from './scripted.ts';

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));

/** Column C = A + B on every data row; the golden workbook holds the sums. */
function totals(rows: [number, number][]): {
  input: Record<string, Record<string, number | string>>;
  gold: Record<string, Record<string, number | string>>;
} {
  const input: Record<string, number | string> = { A1: 'a', B1: 'b', C1: 'total' };
  for (const [i, [a, b]] of rows.entries()) Object.assign(input, { [`A${i + 2}`]: a, [`B${i + 2}`]: b });
  const gold = { ...input };
  for (const [i, [a, b]] of rows.entries()) gold[`C${i + 2}`] = a + b;
  return { input: { Data: input }, gold: { Data: gold } };
}

const TOTAL_CODE = [
  'import openpyxl',
  'INPUT_PATH = "somewhere_else.xlsx"',
  'wb = openpyxl.load_workbook(INPUT_PATH)',
  "ws = wb['Data']",
  'for r in range(2, ws.max_row + 1):',
  '    ws.cell(r, 3).value = ws.cell(r, 1).value + ws.cell(r, 2).value',
  'wb.save(OUTPUT_PATH)',
].join('\n');

const TASKS: TaskSpec[] = [
  {
    id: '101',
    instruction: 'Put the total of columns A and B in column C.',
    answer_position: "'Data'!C2:C4",
    layout: 'original',
    cases: [
      totals([
        [1, 2],
        [3, 4],
        [5, 6],
      ]),
      totals([
        [10, 1],
        [2, 2],
        [7, 0.5],
      ]),
      totals([
        [0, 0],
        [1, 1],
        [2, 2],
      ]),
    ],
  },
  {
    id: '102-3',
    instruction: 'Put the total of columns A and B in column C.',
    instruction_type: 'Sheet-Level Manipulation',
    answer_position: 'C2:C3',
    answer_sheet: 'Data',
    layout: 'verified',
    cases: [
      totals([
        [4, 4],
        [1, 9],
      ]),
    ],
  },
  {
    id: '103',
    instruction: 'Put the total of columns A and B in column C.',
    answer_position: 'C2:C3',
    layout: 'bare',
    cases: [
      totals([
        [2, 3],
        [4, 5],
      ]),
    ],
  },
];

interface Release {
  root: string;
  splits: string;
}

/** A release with the three tasks, one more whose folder is empty, and the splits materialised from an id manifest. */
async function release(): Promise<Release> {
  const dir = tmpDir('skillopt-sheets-');
  const root = path.join(dir, 'spreadsheetbench_verified_400');
  const records = makeRelease(root, TASKS);
  fs.mkdirSync(path.join(root, 'spreadsheet', '104'), { recursive: true });
  const empty = {
    id: '104',
    instruction: 'Nothing to see.',
    spreadsheet_path: 'spreadsheet/104',
    instruction_type: 'Cell-Level Manipulation',
    answer_position: 'A1',
  };
  fs.writeFileSync(path.join(root, 'dataset.json'), JSON.stringify([...records, empty]));
  const manifest = path.join(dir, 'spreadsheetbench_id_split');
  makeManifest(manifest, { train: [records[0]!, empty], val: [records[1]!], test: [records[2]!] });
  const splits = path.join(dir, 'spreadsheetbench_split');
  await materialize({ benchmark: 'spreadsheetbench', raw: root, manifest, out: splits });
  return { root, splits };
}

let shared: Promise<Release> | undefined;
/** One release for the whole file (the tests that change it put it back). */
const sharedRelease = () => (shared ??= release());

function envFor(r: Release, env: Record<string, unknown> = {}): SpreadsheetBenchEnv {
  const dir = tmpDir();
  writeFiles(dir, {
    'c.yaml': stringify({ env: { name: 'spreadsheetbench', split_dir: r.splits, data_root: r.root, ...env } }),
  });
  return createEnv(loadConfig(path.join(dir, 'c.yaml'), { environment: {} })) as SpreadsheetBenchEnv;
}

/** Whether a process has ended (gone, or a zombie waiting to be collected), given a few seconds for the kill to land. */
async function whenEnded(pid: number): Promise<boolean> {
  const state = () =>
    fs.existsSync(`/proc/${pid}/stat`)
      ? (fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] ?? 'gone')
      : 'gone';
  for (let i = 0; i < 100; i++) {
    if (['gone', 'Z', 'X'].includes(state())) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

const fenced = (code: string) => `Here is the script.\n\n\`\`\`python\n${code}\n\`\`\`\n`;

describe('SpreadsheetBench data', () => {
  let r: Release;
  before(async () => {
    r = await sharedRelease();
  });

  it('finds the test cases of each published layout; a workbook without its partner is not a case', () => {
    const original = path.join(r.root, 'spreadsheet', '101');
    fs.copyFileSync(path.join(original, '1_101_input.xlsx'), path.join(original, '4_101_input.xlsx'));
    try {
      assert.deepEqual(
        findCases(original).map((c) => [c.no, path.basename(c.input), path.basename(c.gold)]),
        [
          ['1', '1_101_input.xlsx', '1_101_answer.xlsx'],
          ['2', '2_101_input.xlsx', '2_101_answer.xlsx'],
          ['3', '3_101_input.xlsx', '3_101_answer.xlsx'],
        ],
      );
    } finally {
      fs.rmSync(path.join(original, '4_101_input.xlsx'));
    }
    assert.deepEqual(
      findCases(path.join(r.root, 'spreadsheet', '102-3')).map((c) => path.basename(c.gold)),
      ['1_102-3_golden.xlsx'],
    );
    assert.deepEqual(
      findCases(path.join(r.root, 'spreadsheet', '103')).map((c) => [c.no, path.basename(c.input)]),
      [['1', 'initial.xlsx']],
    );
    assert.deepEqual(findCases(path.join(r.root, 'spreadsheet', '104')), []);
  });

  it("materialize with the original's id manifest keeps its ids and order; the env loads them and leaves out a task without cases", async () => {
    assert.deepEqual(
      readJson(path.join(r.splits, 'train/items.json')).map((i: Item) => i.id),
      ['101'],
    );
    const manifest = readJson(path.join(r.splits, 'split_manifest.json'));
    assert.deepEqual(manifest.left_out, [
      {
        id: '104',
        split: 'train',
        reason: `no test cases (input and golden workbooks) in ${path.join(r.root, 'spreadsheet', '104')}`,
      },
    ]);
    const stored = readJson(path.join(r.splits, 'val/items.json'))[0];
    assert.equal(stored.answer_sheet, 'Data', "the release's own fields are kept");
    assert.equal(stored.spreadsheet_path, 'spreadsheet/102-3');
    const splits = await envFor(r).load();
    assert.deepEqual(
      [splits.train, splits.val, splits.test].map((s) => s.map((i) => [i.id, i.type, i.answer_position])),
      [
        [['101', 'cell_level', "'Data'!C2:C4"]],
        [['102-3', 'sheet_level', "'Data'!C2:C3"]],
        [['103', 'cell_level', 'C2:C3']],
      ],
    );
    // The materialised splits name only tasks with cases; the env would leave out one whose workbooks went missing.
    const moved = path.join(r.root, 'spreadsheet', '103-away');
    fs.renameSync(path.join(r.root, 'spreadsheet', '103'), moved);
    try {
      await assert.rejects(envFor(r).load(), /split 'test' has no item left.*103 \(spreadsheet folder not found/);
    } finally {
      fs.renameSync(moved, path.join(r.root, 'spreadsheet', '103'));
    }
  });

  it('a record without answer_position is an error naming the file, the item and the field', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'splits/train/items.json': JSON.stringify([{ id: '101', instruction: 'x', spreadsheet_path: 'spreadsheet/101' }]),
      'splits/val/items.json': '[]',
      'splits/test/items.json': '[]',
    });
    await assert.rejects(
      envFor({ root: r.root, splits: path.join(dir, 'splits') }).load(),
      /train\/items\.json:1 \(item 1\): missing field 'answer_position'/,
    );
  });

  it('an answer position that names no cell range is kept, with a warning that it always fails (as in the official evaluation)', async () => {
    const dir = tmpDir();
    const record = (id: string, answer_position: string) => ({
      id,
      instruction: 'x',
      spreadsheet_path: 'spreadsheet/103',
      answer_position,
    });
    writeFiles(dir, {
      'splits/train/items.json': JSON.stringify([record('a', "'Data'!C:C"), record('b', 'C2:C3')]),
      'splits/val/items.json': JSON.stringify([record('c', 'C2, D')]),
      // A sheet whose name holds a comma: the part is shown whole, not cut at the comma.
      'splits/test/items.json': JSON.stringify([record('d', 'C2'), record('e', "'Jan, Feb'!A1,'Jan, Feb'!C:C")]),
    });
    const splits = await envFor({ root: r.root, splits: path.join(dir, 'splits') }).load();
    assert.deepEqual(splits.warnings, [
      "env 'spreadsheetbench': 3 items have an answer_position that names no cell range: a ('Data'!C:C), c (D), e ('Jan, Feb'!C:C); they always fail, as in the official evaluation",
    ]);
    assert.equal(splits.train.length, 2);
  });

  it('a missing interpreter is a clear error before anything runs', async () => {
    await assert.rejects(envFor(r, { python: '/nowhere/python3' }).load(), (err: Error) => {
      assert.ok(err instanceof UserError);
      assert.match(
        err.message,
        /SpreadsheetBench needs Python 3 with openpyxl and pandas; env\.python names \/nowhere\/python3 \(not found\)/,
      );
      assert.match(err.message, /apt-get install python3-openpyxl python3-pandas/);
      return true;
    });
  });
});

describe('the official comparison', () => {
  const dir = tmpDir('skillopt-compare-');
  const gold = path.join(dir, 'gold.xlsx');
  const cell = (name: string, value: unknown) => ({
    [path.join(dir, `${name}.xlsx`)]: { Sheet1: { A1: value as never }, Other: { B2: 'x' } },
  });
  const GOLD = {
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: a value a user typed, not pi
    A1: 3.14159,
    A2: '5',
    A3: 7,
    A4: true,
    A5: { time: '12:30:00' },
    A6: { date: '2024-03-01T10:00:00' },
    A7: '',
    A8: 'Total',
    A9: 45352,
  };
  before(() => {
    makeWorkbooks({
      [gold]: { Sheet1: GOLD, Other: { B2: 'x' } },
      ...cell('pi2', 3.14),
      ...cell('pi3', 3.15),
    });
  });

  /** Each row: the golden cell, a predicted value, and whether the official rules call them equal. */
  const RULES: [string, unknown, boolean, string][] = [
    ['A1', 3.14, true, 'numbers are rounded to 2 decimals before comparing'],
    ['A1', 3.15, false, 'and then must be equal'],
    ['A2', 5, true, 'numeric text reads as its number'],
    ['A3', 7.0001, true, 'an int and a float equal after rounding'],
    ['A3', '7', true, 'numeric text against a number'],
    ['A4', 1, true, 'a boolean is a number to the official rules (True = 1)'],
    ['A5', '12:30', true, 'a time compares as its HH:MM text'],
    ['A5', { time: '12:31:00' }, false, 'another minute is another time'],
    ['A6', { date: '2024-03-01T02:00:00' }, true, 'a date-time compares as its Excel serial day, rounded'],
    ['A6', 45352, true, 'so the serial number itself matches'],
    ['A6', { date: '2024-03-02T10:00:00' }, false, 'another day does not'],
    ['A7', null, true, 'an empty string equals an empty cell'],
    ['A7', 0, false, 'zero is not empty'],
    ['A8', 'total', false, 'text must match exactly'],
    ['A8', 8, false, 'types must match otherwise'],
    ['A9', { date: '2024-03-01T00:00:00' }, true, 'a serial number in the golden file matches the date-time'],
  ];

  it('applies each rule of the official evaluation, cell by cell (the same verdicts as the original evaluator)', async () => {
    // One output per rule: the golden cells, with the rule's cell replaced by its value.
    const spec: Record<string, Record<string, Record<string, never>>> = {};
    for (const [i, [ref, value]] of RULES.entries())
      spec[path.join(dir, `r${i}.xlsx`)] = { Sheet1: { ...GOLD, [ref]: value } as never, Other: { B2: 'x' as never } };
    makeWorkbooks(spec);
    const checks = await compareOutputs(
      testPython(),
      'A1:A9',
      RULES.map((_, i) => ({ no: String(i), pred: path.join(dir, `r${i}.xlsx`), gold })),
    );
    for (const [i, [ref, value, equal, why]] of RULES.entries())
      assert.equal(checks[i]!.ok, equal, `${ref} vs ${JSON.stringify(value)}: ${why}`);
  });

  it('answer positions: a quoted sheet name, none (the first golden sheet), several ranges; a missing sheet or output fails with the reason', async () => {
    const py = testPython();
    const pred = path.join(dir, 'pi2.xlsx');
    const [noSheet, quoted, list, missingSheet, missingFile] = await compareOutputs(py, 'A1', [
      { no: '1', pred, gold },
      { no: '2', pred: path.join(dir, 'missing.xlsx'), gold },
    ]).then(
      async (first) =>
        [
          first[0]!,
          (await compareOutputs(py, "'Other'!B2", [{ no: '1', pred, gold }]))[0]!,
          (await compareOutputs(py, "A1,'Other'!B2:B3", [{ no: '1', pred, gold }]))[0]!,
          (await compareOutputs(py, 'Nope!A1', [{ no: '1', pred, gold }]))[0]!,
          first[1]!,
        ] as const,
    );
    assert.equal(noSheet.ok, true);
    assert.equal(quoted.ok, true);
    assert.equal(list.ok, true);
    assert.equal(list.empty_ok, 1, 'B3 is empty in both');
    assert.deepEqual(missingSheet, { ...missingSheet, ok: false, reason: "worksheet 'Nope' is not in the output" });
    assert.deepEqual(missingFile, { ...missingFile, ok: false, reason: 'the output workbook was not written' });
    // A sheet whose name holds a comma is read as one sheet.
    const comma = path.join(dir, 'comma.xlsx');
    makeWorkbooks({ [comma]: { 'Jan, Feb': { A1: 1, B1: 2 } } });
    const both = (await compareOutputs(py, "'Jan, Feb'!A1,'Jan, Feb'!B1", [{ no: '1', pred: comma, gold: comma }]))[0]!;
    assert.equal(both.ok, true, both.reason);
    assert.equal(both.cells.length, 2);
    const unreadable = (await compareOutputs(py, 'A:A', [{ no: '1', pred, gold }]))[0]!;
    assert.deepEqual(
      [unreadable.ok, unreadable.reason],
      [false, "answer_position 'A:A' cannot be read: 'A:A' is not a cell or a range of cells"],
    );
    const wrong = (await compareOutputs(py, 'A1:A2', [{ no: '1', pred: path.join(dir, 'pi3.xlsx'), gold }]))[0]!;
    assert.equal(wrong.reason, 'Sheet1!A1: got 3.15, expected 3.14159');
    assert.deepEqual(
      wrong.cells.map((c) => [c.ref, c.got, c.expected, c.ok]),
      [
        ['Sheet1!A1', '3.15', '3.14159', false],
        ['Sheet1!A2', '(empty)', '"5"', false],
      ],
    );
  });

  it('a formula cell has no cached value when openpyxl wrote it: it reads as empty and is flagged', async () => {
    const pred = path.join(dir, 'formula.xlsx');
    makeWorkbooks({ [pred]: { Sheet1: { A1: '=3.14159', A3: 7 } } });
    const [check] = await compareOutputs(testPython(), 'A1,A3', [{ no: '1', pred, gold }]);
    assert.equal(check!.ok, false);
    assert.match(check!.reason, /Sheet1!A1: got \(empty\), expected 3\.14159/);
    assert.deepEqual(check!.formulas, ['Sheet1!A1 =3.14159']);
  });
});

describe('running generated code', () => {
  let r: Release;
  const secrets = { OPENAI_API_KEY: 'sk-test-must-not-leak', MY_SERVICE_TOKEN: 'tok-must-not-leak' };
  before(async () => {
    r = await sharedRelease();
    Object.assign(process.env, secrets);
  });
  after(() => {
    for (const k of Object.keys(secrets)) delete process.env[k];
  });

  const limits = { timeoutMs: 20_000, maxOutputBytes: 100_000, maxFileBytes: 5_000_000 };
  const input = () => path.join(r.root, 'spreadsheet', '101', '1_101_input.xlsx');

  it('a script looking for the golden workbook finds only its own folder, with the input copied in', async () => {
    const scratch = tmpDir();
    const code = [
      'import os, glob, shutil',
      'here = os.path.dirname(os.path.abspath(INPUT_PATH))',
      "found = [p for p in glob.glob(os.path.join(here, '**', '*'), recursive=True) + glob.glob(os.path.join(os.path.dirname(here), '*')) if 'answer' in p or 'golden' in p]",
      "print('cwd', os.getcwd() == here, 'found', found)",
      'shutil.copy(found[0] if found else INPUT_PATH, OUTPUT_PATH)',
    ].join('\n');
    const run = await runScript(testPython(), code, input(), scratch, limits);
    assert.equal(run.ok, true, run.log);
    assert.equal(run.log, 'cwd True found []');
    assert.deepEqual(fs.readdirSync(path.dirname(run.output)).sort(), [
      '.tmp',
      'input.xlsx',
      'output.xlsx',
      'solution.py',
    ]);
  });

  it('a script inherits no key from the environment; its home and temp directory are its own folder', async () => {
    const code = [
      'import os, json, tempfile',
      "print(json.dumps({'env': dict(os.environ), 'tmp': tempfile.gettempdir(), 'home': os.path.expanduser('~')}))",
      "open(OUTPUT_PATH, 'w').close()",
    ].join('\n');
    const run = await runScript(testPython(), code, input(), tmpDir(), limits);
    assert.equal(run.ok, true, run.log);
    const seen = JSON.parse(run.log) as { env: Record<string, string>; tmp: string; home: string };
    for (const value of Object.values(secrets))
      assert.ok(!run.log.includes(value), 'a secret value reached the script');
    assert.deepEqual(
      Object.keys(seen.env).filter((k) => /KEY|TOKEN|SECRET|PASSWORD/i.test(k)),
      [],
    );
    assert.equal(seen.home, path.dirname(run.output));
    assert.equal(seen.tmp, path.join(path.dirname(run.output), '.tmp'));
  });

  it('a script that runs forever is stopped at the time limit, with every process it started', async () => {
    const code = [
      'import subprocess, time',
      "child = subprocess.Popen(['sleep', '300'])",
      "print('child', child.pid, flush=True)",
      'while True:',
      '    time.sleep(0.05)',
    ].join('\n');
    const run = await runScript(testPython(), code, input(), tmpDir(), { ...limits, timeoutMs: 1500 });
    assert.equal(run.ok, false);
    assert.equal(run.failure, 'stopped after 2 s (time limit)');
    const pid = Number(/child (\d+)/.exec(run.log)![1]);
    assert.equal(await whenEnded(pid), true, 'the process it started is still running');
  });

  it('a script that prints without end is stopped at the output cap; one that writes a huge file fails', async () => {
    const loud = await runScript(testPython(), "while True:\n    print('x' * 1000)", input(), tmpDir(), limits);
    assert.equal(loud.failure, 'stopped after printing more than 100000 bytes');
    assert.ok(loud.log.length < 10_000, 'the log is kept short');
    const big = await runScript(
      testPython(),
      "open(OUTPUT_PATH, 'wb').write(b'x' * 6_000_000)",
      input(),
      tmpDir(),
      limits,
    );
    assert.equal(big.failure, 'exit code 2');
    assert.match(big.log, /File too large/);
  });

  it('a script stopped because the run is ending is not scored: the rollout fails as an error', async () => {
    const stop = new AbortController();
    stop.abort();
    await assert.rejects(
      runScript(testPython(), 'import time\ntime.sleep(30)', input(), tmpDir(), limits, stop.signal),
      /the script was stopped: the run is ending/,
    );
  });

  it('INPUT_PATH and OUTPUT_PATH set by the script itself are ignored; sys.exit(0) is a normal end', async () => {
    const run = await runScript(testPython(), `${TOTAL_CODE}\nimport sys\nsys.exit(0)`, input(), tmpDir(), limits);
    assert.equal(run.ok, true, run.log);
    const [check] = await compareOutputs(testPython(), "'Data'!C2:C4", [
      { no: '1', pred: run.output, gold: path.join(r.root, 'spreadsheet', '101', '1_101_answer.xlsx') },
    ]);
    assert.equal(check!.ok, true, check!.reason);
  });
});

describe('SpreadsheetBench rollouts', () => {
  let r: Release;
  let items: Record<string, Item>;
  before(async () => {
    r = await sharedRelease();
    const s = await envFor(r).load();
    items = Object.fromEntries([...s.train, ...s.val, ...s.test].map((i) => [i.id, i]));
  });

  const systemOf = (t: Trajectory) => t.conversation!.at(-1) as { role: string; content: string };

  it('single: the script of the reply runs on every test case; soft is the share of cases passed', async () => {
    const env = envFor(r);
    // Right on case 1 only: it writes case 1's sums as constants.
    const hardcoded =
      "import openpyxl\nwb = openpyxl.load_workbook(INPUT_PATH)\nws = wb['Data']\nfor r, v in [(2, 3), (3, 7), (4, 11)]:\n    ws.cell(r, 3).value = v\nwb.save(OUTPUT_PATH)";
    const target = new ScriptedModel('t', () => fenced(hardcoded));
    const t = await env.rollout(items['101']!, '# Skill\nRead the data.', { target, seed: 1 });
    assert.equal(target.requests.length, 1);
    assert.deepEqual([t.hard, t.soft], [0, 1 / 3]);
    assert.match(
      t.failReason!,
      /^eval-mismatch: Data!C2: got 11, expected 11\.0|^eval-mismatch: Data!C2: got 3, expected 11/,
    );
    const req = target.requests[0]!;
    assert.match(req.system!, /## Skill\n\n# Skill\nRead the data\./);
    assert.equal(req.skill, '# Skill\nRead the data.');
    const user = lastUserText(req);
    assert.match(user, /# Instruction\nPut the total of columns A and B in column C\./);
    assert.match(user, /Answer position \(the cells that are checked\): 'Data'!C2:C4/);
    assert.match(user, /## Sheet "Data": A1:C4, 4 rows x 3 columns\nA1=a \| B1=b \| C1=total\nA2=1 \| B2=2 \| C2=/);
    assert.match(
      systemOf(t).content,
      /^\[POST-EXECUTION VERIFICATION\]\nCase 1: PASS\n[\s\S]*Case 2: FAIL, Data!C2: got 3, expected 11\n {2}Data!C2: got=3, expected=11 ✗/,
    );
    const right = await env.rollout(items['103']!, '', {
      target: new ScriptedModel('t', () => fenced(TOTAL_CODE)),
      seed: 1,
    });
    assert.deepEqual([right.hard, right.soft, right.failReason], [1, 1, undefined]);
    assert.equal(right.predicted, TOTAL_CODE);
  });

  it('single: a reply without code, and code that crashes, fail with the reasons of the original', async () => {
    const env = envFor(r);
    const empty = await env.rollout(items['103']!, '', { target: new ScriptedModel('t', () => ''), seed: 1 });
    assert.deepEqual([empty.hard, empty.failReason], [0, 'empty-code-block']);
    const crash = await env.rollout(items['103']!, '', {
      target: new ScriptedModel('t', () => fenced("raise ValueError('no such column')")),
      seed: 1,
    });
    assert.deepEqual([crash.hard, crash.failReason], [0, 'exec-error: ValueError: no such column']);
    const nothing = await env.rollout(items['103']!, '', {
      target: new ScriptedModel('t', () => fenced("print('done')")),
      seed: 1,
    });
    assert.equal(nothing.failReason, 'output-not-found');
  });

  it('multi: an error is fed back in evaluation and training; wrong cells only in training, without the golden values', async () => {
    const env = envFor(r, { mode: 'multi', max_turns: 4 });
    const formula =
      "import openpyxl\nwb = openpyxl.load_workbook(INPUT_PATH)\nws = wb['Data']\nfor r in range(2, ws.max_row + 1):\n    ws.cell(r, 3).value = f'=A{r}+B{r}'\nwb.save(OUTPUT_PATH)";
    const replies = (req: ChatRequest, n: number) => {
      if (n === 0) return fenced("import openpyxl\nwb = openpyxl.load_workbook(INPUT_PATH)\nws = wb['Sheet1']");
      const last = lastUserText(req);
      return fenced(/your value/.test(last) ? TOTAL_CODE : formula);
    };
    const evalTarget = new ScriptedModel('t', replies);
    const evaluated = await env.rollout(items['102-3']!, '', { target: evalTarget, seed: 1 });
    assert.equal(evalTarget.requests.length, 2, 'the crash is fed back; the formula output runs and is not checked');
    assert.match(
      lastUserText(evalTarget.requests[1]!),
      /^Your script failed when it ran:\n\n```\n[\s\S]*KeyError: 'Worksheet Sheet1 does not exist\.'\n```/,
    );
    assert.equal(evaluated.hard, 0);
    assert.match(
      systemOf(evaluated).content,
      /These wrong cells hold a formula with no saved value[\s\S]*Data!C2 =A2\+B2/,
    );

    const trainTarget = new ScriptedModel('t', replies);
    const trained = await env.rollout(items['102-3']!, '', { target: trainTarget, seed: 1, training: true });
    assert.equal(trainTarget.requests.length, 3);
    const feedback = lastUserText(trainTarget.requests[2]!);
    assert.match(
      feedback,
      /^Your script ran, but some of the cells the task checks hold wrong values:\n {2}Data!C2: your value = \(empty\) \(wrong\)\n {2}Data!C3: your value = \(empty\) \(wrong\)\n\n/,
    );
    assert.doesNotMatch(feedback, /expected|\b8\b|\b10\b/, 'no golden value reaches the target');
    assert.deepEqual([trained.hard, trained.soft], [1, 1]);
    assert.equal(trained.conversation!.filter((c) => 'role' in c && c.role === 'assistant').length, 3);
    // With train_feedback off, training is like evaluation.
    const plain = new ScriptedModel('t', replies);
    await envFor(r, { mode: 'multi', max_turns: 4, train_feedback: false }).rollout(items['102-3']!, '', {
      target: plain,
      seed: 1,
      training: true,
    });
    assert.equal(plain.requests.length, 2);
  });

  it('react: write_file and a python runner confined to the folder; solution.py is what is scored', async () => {
    const env = envFor(r, { mode: 'react', max_turns: 6 });
    const target = new ScriptedModel('t', (_req, n) => {
      const calls = [
        [
          {
            id: 'c1',
            name: 'python',
            input: {
              code: "import openpyxl\nwb = openpyxl.load_workbook(INPUT_PATH)\nprint(wb.sheetnames, wb['Data'].max_row)",
            },
          },
        ],
        [
          { id: 'c2', name: 'write_file', input: { path: '../escape.py', content: 'x' } },
          { id: 'c3', name: 'write_file', input: { path: 'solution.py', content: TOTAL_CODE } },
        ],
        [{ id: 'c4', name: 'python', input: { script: 'solution.py' } }],
      ][n];
      return calls ? { text: '', toolCalls: calls } : { text: 'solution.py writes the totals.' };
    });
    const t = await env.rollout(items['103']!, 'be careful', { target, seed: 1 });
    assert.deepEqual([t.hard, t.soft], [1, 1]);
    assert.deepEqual(
      target.requests[0]!.tools!.map((x) => x.name),
      ['write_file', 'python'],
    );
    assert.match(target.requests[0]!.system!, /`python\(script\)` runs a Python file[\s\S]*## Skill\n\nbe careful/);
    const tools = t.conversation!.filter((c): c is { type: 'tool_call'; cmd: string; obs: string } => 'type' in c);
    assert.equal(tools[0]!.obs, "['Data'] 3");
    assert.match(tools[1]!.obs, /^error: \.\.\/escape\.py is outside the working folder/);
    assert.equal(tools[3]!.obs, '(it printed nothing)\n[output.xlsx is in the folder]');
    assert.equal(t.predicted, TOTAL_CODE);
    const idle = await env.rollout(items['103']!, '', {
      target: new ScriptedModel('t', () => 'I cannot do this.'),
      seed: 1,
    });
    assert.equal(idle.failReason, 'no-solution-py');
  });

  it("an agent target (through the harness's chat model) finds input.xlsx and run_solution.py in its workspace, writes solution.py, and is scored on its code; it runs in single mode only", async () => {
    const env = envFor(r);
    const seen: { files: string[]; skill: string; task: string; ran: string }[] = [];
    // A stand-in for an agent CLI: it works in the workspace the harness prepared, as an agent would.
    const agent: AgentHarness = {
      name: 'stand-in',
      layout: { skillsDir: '.agents/skills', instructionsFile: 'AGENTS.md' },
      async run({ workspace }) {
        fs.writeFileSync(path.join(workspace, 'solution.py'), TOTAL_CODE);
        const ran = spawnSync(testPython(), ['run_solution.py'], { cwd: workspace, encoding: 'utf8' });
        seen.push({
          files: (fs.readdirSync(workspace, { recursive: true }) as string[]).sort(),
          skill: fs.readFileSync(path.join(workspace, '.agents/skills/skillopt-target/SKILL.md'), 'utf8'),
          task: fs.readFileSync(path.join(workspace, 'task.md'), 'utf8'),
          ran: `${ran.status}`,
        });
        // Agents report in prose; the code is the file it left, not its message.
        return {
          text: 'solution.py is written and run_solution.py runs it.',
          usage: { input: 100, output: 20, cached: 0, reasoning: 0 },
          trace: { agent: 'stand-in', steps: [], files: ['solution.py'], errors: [], durationMs: 1, exitCode: 0 },
        };
      },
    };
    const target = new HarnessChatModel(agent, {
      backend: 'codex_exec',
      model: 'test',
      skillInstall: 'skill',
      skillName: 'skillopt-target',
      skillDescription: 'the skill under training',
    });
    const t = await env.rollout(items['103']!, 'Check every row.', { target, seed: 1 });
    assert.deepEqual([t.hard, t.soft], [1, 1]);
    assert.equal(t.predicted, TOTAL_CODE);
    assert.deepEqual(
      t.traces,
      [
        {
          agent: 'stand-in',
          steps: [],
          files: ['solution.py'],
          errors: [],
          durationMs: 1,
          exitCode: 0,
          returned: { 'solution.py': TOTAL_CODE },
        },
      ],
      "the agent's trace is kept, with the script it left",
    );
    const [run] = seen;
    assert.deepEqual(run!.files, [
      '.agents',
      '.agents/skills',
      '.agents/skills/skillopt-target',
      '.agents/skills/skillopt-target/SKILL.md',
      'input.xlsx',
      'output.xlsx',
      'run_solution.py',
      'solution.py',
      'task.md',
    ]);
    assert.equal(run!.ran, '0', 'run_solution.py runs the solution in the workspace');
    assert.match(run!.skill, /Check every row\./);
    assert.match(run!.task, /Write your script to `solution\.py`[\s\S]*`python run_solution\.py` runs it/);
    assert.doesNotMatch(run!.task, /Check every row/, 'the skill is installed, not repeated in the task');
    // An agent that leaves no solution.py and answers without code has nothing to score.
    const idle = new HarnessChatModel(
      {
        ...agent,
        run: async () => ({
          text: 'I could not finish.',
          usage: { input: 1, output: 1, cached: 0, reasoning: 0 },
          trace: { agent: 'stand-in', steps: [], files: [], errors: [], durationMs: 1, exitCode: 0 },
        }),
      },
      {
        backend: 'codex_exec',
        model: 'test',
        skillInstall: 'skill',
        skillName: 'skillopt-target',
        skillDescription: 'the skill under training',
      },
    );
    const none = await env.rollout(items['103']!, 'Check every row.', { target: idle, seed: 1 });
    assert.deepEqual([none.hard, none.soft, none.failReason], [0, 0, 'no-solution-py']);
    await assert.rejects(
      envFor(r, { mode: 'multi' }).rollout(items['103']!, '', { target, seed: 1 }),
      (e: Error) => e instanceof UserError && /runs agent targets in mode 'single' only/.test(e.message),
    );
  });

  it('the dry run counts every turn a rollout may take: max_turns in multi and react, one in single or for an agent target', async () => {
    assert.equal(envFor(r, { mode: 'multi', max_turns: 7 }).maxTargetCalls(false), 7);
    assert.equal(envFor(r, { mode: 'react', max_turns: 9 }).maxTargetCalls(false), 9);
    assert.equal(envFor(r, { mode: 'single' }).maxTargetCalls(false), 1);
    assert.equal(envFor(r, { mode: 'multi', max_turns: 7 }).maxTargetCalls(true), 1);
    const plans: ReturnType<typeof planRun>[] = [];
    for (const mode of ['single', 'multi']) {
      const dir = tmpDir();
      writeFiles(dir, {
        'c.yaml': stringify({
          env: {
            name: 'spreadsheetbench',
            split_dir: r.splits,
            data_root: r.root,
            mode,
            max_turns: 5,
            start_blank: true,
          },
        }),
      });
      plans.push(planRun(await planInputFor(loadConfig(path.join(dir, 'c.yaml'), { environment: {} }))));
    }
    const calls = (i: number, stage: string) => plans[i]!.stages.find((st) => st.stage === stage)!;
    assert.equal(calls(1, 'rollout').calls, 5 * calls(0, 'rollout').calls);
    assert.equal(calls(1, 'rollout').upperBound, true);
    assert.equal(calls(1, 'baseline').calls, 5 * calls(0, 'baseline').calls);
    assert.ok(plans[1]!.assumptions.some((a) => /5 target calls/.test(a)));
  });

  it('the code is the first python block of a reply, else its first block, else the reply', () => {
    assert.equal(extractCode('a\n```text\nnot this\n```\n```python\nx = 1\n```'), 'x = 1');
    assert.equal(extractCode('```\ny = 2\n```'), 'y = 2');
    assert.equal(extractCode('z = 3'), 'z = 3');
    assert.equal(extractCode('```python\nw = 4\n'), 'w = 4');
  });
});
