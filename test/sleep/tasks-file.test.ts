import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { UserError } from '../../src/errors.ts';
import { splitTasks } from '../../src/sleep/night/consolidate.ts';
import { readTasksFile, TASKS_FORMAT, writeTasksFile } from '../../src/sleep/tasks/tasks-file.ts';
import { taskRecord } from '../../src/sleep/tasks/task.ts';
import { tmpDir } from '../helpers/tmp.ts';

const SPLIT = { val: 0.34, test: 0, seed: 42 };

function file(content: unknown): string {
  const f = path.join(tmpDir('skillopt-tasks-'), 'tasks.json');
  fs.writeFileSync(f, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return f;
}

function refusal(content: unknown): string {
  const f = file(content);
  try {
    readTasksFile(f, SPLIT);
  } catch (err) {
    assert.ok(err instanceof UserError, String(err));
    return (err as Error).message.replace(f, '<file>');
  }
  assert.fail('accepted');
}

test('a tasks file round trip: the original format, two-space JSON with a final newline, every field kept', () => {
  const tasks = [
    taskRecord({
      id: 'a',
      intent: 'Format the dates',
      split: 'val',
      reference_kind: 'rule',
      judge: { kind: 'rule', checks: [{ op: 'contains', arg: '2019-03-05' }] },
    }),
    taskRecord({
      id: 'b',
      intent: 'Write the notes',
      split: 'train',
      reference_kind: 'rubric',
      reference: 'Names each change.',
    }),
  ];
  const f = path.join(tmpDir('skillopt-tasks-'), 'sub', 'tasks.json');
  writeTasksFile(f, {
    project: '/p',
    transcript_source: 'model',
    n_sessions: 3,
    target_skill_path: '/s/SKILL.md',
    reviewed: false,
    tasks,
  });
  const text = fs.readFileSync(f, 'utf8');
  assert.ok(text.startsWith(`{\n  "format": "${TASKS_FORMAT}",\n  "project": "/p",`));
  assert.ok(text.endsWith('}\n'));
  const loaded = readTasksFile(f, SPLIT);
  assert.deepEqual(loaded.tasks, tasks);
  assert.deepEqual(
    [loaded.project, loaded.n_sessions, loaded.reviewed, loaded.target_skill_path],
    ['/p', 3, false, '/s/SKILL.md'],
  );
});

test("a bare list of tasks, the original's split names, unknown keys ignored, missing ones defaulted; all-train lists get held-out tasks by hash", () => {
  const loaded = readTasksFile(
    file([
      { id: 'x', intent: 'Do x', split: 'holdout', future_field: 1 },
      { id: 'y', intent: 'Do y', split: 'replay' },
    ]),
    SPLIT,
  );
  assert.deepEqual(
    loaded.tasks.map((t) => [t.id, t.split]),
    [
      ['x', 'val'],
      ['y', 'train'],
    ],
  );
  assert.equal((loaded.tasks[0] as Record<string, unknown>).future_field, undefined);
  assert.equal(loaded.tasks[0]!.outcome, 'unknown');
  assert.equal(loaded.reviewed, false);
  const hashed = readTasksFile(
    file({
      tasks: [
        { id: 'p', intent: 'Do p' },
        { id: 'q', intent: 'Do q' },
        { id: 'r', intent: 'Do r' },
      ],
    }),
    SPLIT,
  );
  assert.ok(hashed.tasks.some((t) => t.split === 'val') && hashed.tasks.some((t) => t.split === 'train'));
});

test('bad tasks are refused with the file, the task and what is wrong; doubtful judges are warned about', () => {
  assert.match(refusal('not json'), /^<file>: cannot read the tasks file/);
  assert.match(refusal({ format: 'other.v9', tasks: [] }), /format 'other\.v9' is not skillopt_sleep\.tasks\.v1/);
  assert.match(refusal({ tasks: 'x' }), /expected a tasks file/);
  assert.equal(
    refusal({
      tasks: [
        3,
        { id: 'a', intent: 'x', reference_kind: 'rule', judge: { kind: 'rule', checks: [{ op: 'regex', arg: '(' }] } },
        { id: 'b' },
      ],
    }).split('\n')[0],
    '<file>: tasks are not valid:',
  );
  const msg = refusal({
    tasks: [
      3,
      { id: 'a', intent: 'x', reference_kind: 'rule', judge: { kind: 'rule', checks: [{ op: 'regex', arg: '(' }] } },
      { id: 'b' },
    ],
  });
  assert.match(msg, /tasks\[0\]: not an object/);
  assert.match(msg, /tasks\[1\] \(a\): check 1 \(regex\): the pattern does not compile/);
  assert.match(msg, /tasks\[2\]\.intent: /);
  assert.match(
    refusal({ tasks: [{ id: 'a', intent: 'x', split: 'dev' }] }),
    /tasks\[0\]\.split: expected one of train, val, test/,
  );
  assert.match(
    refusal({
      tasks: [
        { id: 'a', intent: 'x' },
        { id: 'a', intent: 'y' },
      ],
    }),
    /two tasks have the id 'a'/,
  );
  const warned = readTasksFile(
    file({
      tasks: [
        {
          id: 'a',
          intent: 'x',
          reference_kind: 'rule',
          judge: { kind: 'rule', checks: [{ op: 'max_chars', arg: 10 }] },
        },
      ],
    }),
    SPLIT,
  );
  assert.match(warned.warnings[0]!, /^tasks\[0\] \(a\): every check is about the shape/);
});

test('the splits the gate uses: all-test gives nothing to train or validate (also through a tasks file); train only validates on train, unverified; train and test validate on train, never on test', () => {
  const t = (id: string, split: 'train' | 'val' | 'test') => taskRecord({ id, intent: id, split });
  const allTest = splitTasks([t('a', 'test'), t('b', 'test')]);
  assert.deepEqual([allTest.train, allTest.val, allTest.leaked], [[], [], false]);
  const viaFile = readTasksFile(file({ tasks: [t('a', 'test'), t('b', 'test')] }), SPLIT);
  assert.deepEqual(
    viaFile.tasks.map((x) => x.split),
    ['test', 'test'],
    'a file of test tasks stays test',
  );
  const trainOnly = splitTasks([t('a', 'train'), t('b', 'train')]);
  assert.deepEqual([trainOnly.val.map((x) => x.id), trainOnly.leaked], [['a', 'b'], true]);
  const noVal = splitTasks([t('a', 'train'), t('z', 'test')]);
  assert.deepEqual([noVal.train.map((x) => x.id), noVal.val.map((x) => x.id), noVal.leaked], [['a'], ['a'], true]);
  const all = splitTasks([t('a', 'train'), t('b', 'val'), t('c', 'test')]);
  assert.deepEqual([all.train.map((x) => x.id), all.val.map((x) => x.id), all.leaked], [['a'], ['b'], false]);
  const valOnly = splitTasks([t('b', 'val')]);
  assert.deepEqual([valOnly.train.map((x) => x.id), valOnly.leaked], [['b'], true]);
});
