import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SessionDigestSchema, type SessionDigest } from '../../src/sleep/harvest/digest.ts';
import { validateChecks } from '../../src/sleep/judge/rules.ts';
import { dedupTasks } from '../../src/sleep/mine/dedup.ts';
import { heuristicTask, mineHeuristic, outcomeOf } from '../../src/sleep/mine/heuristic.ts';
import { mineWithModel, tasksFromReply, wellFormedChecks } from '../../src/sleep/mine/llm.ts';
import { mine } from '../../src/sleep/mine/mine.ts';
import { assignSplits, splitBucket } from '../../src/sleep/mine/splits.ts';
import { filterTasksForSkill } from '../../src/sleep/mine/target-filter.ts';
import { sha256Hex, taskRecord } from '../../src/sleep/tasks/task.ts';
import { scriptedModel } from '../helpers/models.ts';

function digest(fields: Partial<SessionDigest> & { session_id: string }): SessionDigest {
  return SessionDigestSchema.parse({ project: '/home/dev/acme', source: 'claude', ...fields });
}

test('the heuristic miner: the first prompt is the task, the next three its context, the id a hash of project and prompt', () => {
  const d = digest({
    session_id: 's1',
    user_prompts: ['Fix the date format in report.py', 'use ISO dates', 'still wrong', 'thanks, works now', 'one more'],
    assistant_finals: ['Done: dates are ISO now.'],
    tools_used: ['Read', 'Edit', 'Bash', 'Grep', 'Write'],
    skills_used: ['report-writer', 'report-writer'],
    git_branch: 'main',
    n_user_turns: 5,
  });
  const t = heuristicTask(d)!;
  assert.equal(t.id, `task_${sha256Hex('/home/dev/acme::Fix the date format in report.py').slice(0, 12)}`);
  assert.equal(t.intent, 'Fix the date format in report.py');
  assert.equal(
    t.context_excerpt,
    'Follow-up requests from the same session:\n- use ISO dates\n- still wrong\n- thanks, works now',
  );
  assert.equal(t.attempted_solution, 'Done: dates are ISO now.');
  assert.deepEqual(t.tags, ['tools:Read+Edit+Bash+Grep', 'branch:main']);
  assert.equal(t.reference_kind, 'none');
  assert.deepEqual(t.source_sessions, ['s1']);
  assert.equal(t.skill_hint, 'report-writer', 'the one skill the session used');
  assert.equal(t.outcome, 'success', 'praise after the complaint: the last word decides');
  assert.equal(
    heuristicTask(digest({ session_id: 's2', user_prompts: ['  hi   '] })),
    undefined,
    'a first prompt under 8 characters gives no task',
  );
  assert.equal(
    heuristicTask(digest({ session_id: 's3', user_prompts: ['x'.repeat(900)] }))!.intent.length,
    802,
    'cut to 800 characters and " …"',
  );
  assert.equal(mineHeuristic([d, d, d], 2).length, 2);
});

test('outcome: the last prompt with feedback decides; without any, error markers fail, a long exchange is mixed, else unknown', () => {
  const o = (prompts: string[], feedback: string[] = [], turns = prompts.length) =>
    outcomeOf({ user_prompts: prompts, feedback_signals: feedback, n_user_turns: turns });
  assert.equal(o(['do x', 'thanks', 'no, still broken']), 'fail');
  assert.equal(o(['do x', 'wrong', 'perfect']), 'success');
  assert.equal(o(['do x'], ['neg:cursor_turn_error']), 'fail');
  assert.equal(o(['do x', 'and y', 'and z']), 'mixed');
  assert.equal(o(['do x']), 'unknown');
});

test('the model miner: a rubric is the reference (literal checks are dropped), else well-formed checks judge, else the task is dropped', () => {
  const d = digest({ session_id: 'abc', skills_used: ['dates'] });
  const { tasks, dropped } = tasksFromReply(
    [
      {
        intent: 'Write the changelog entry for a release',
        rubric: '  Names every change and its issue.  ',
        checks: [{ op: 'contains', arg: 'CHANGELOG' }],
        satisfied: false,
      },
      {
        intent: 'Format the report dates',
        rubric: null,
        checks: [
          { op: 'regex', arg: ' \\d{4}-\\d{2} ' },
          { op: 'contains', arg: '  ISO  ' },
          { op: 'max_chars', arg: '200' },
          { op: 'min_chars', arg: 2.5 },
          { op: 'no_refusal', arg: 'x' },
          { op: 'sparkle', arg: 'y' },
          { op: 'contains', arg: ' ' },
        ],
        satisfied: true,
      },
      { intent: 'Something nobody can check', rubric: 42, checks: [] },
      { intent: 'short' },
      { intent: 'A fourth task is one too many', rubric: 'x' },
    ],
    d,
  );
  assert.equal(dropped, 1, 'the third task (uncheckable); a session gives at most three, so the rest are not read');
  assert.equal(tasks.length, 2);
  const [rubric, rule] = tasks;
  assert.equal(rubric!.reference_kind, 'rubric');
  assert.equal(rubric!.reference, 'Names every change and its issue.');
  assert.deepEqual(rubric!.judge, {});
  assert.equal(rubric!.outcome, 'fail');
  assert.equal(rubric!.id, `llm_${sha256Hex('/home/dev/acmeWrite the changelog entry for a release').slice(0, 12)}`);
  assert.deepEqual(rubric!.tags, ['mined:llm']);
  assert.equal(rubric!.skill_hint, 'dates');
  assert.equal(rule!.reference_kind, 'rule');
  assert.equal(rule!.outcome, 'success');
  assert.deepEqual(rule!.judge.checks, [
    { op: 'regex', arg: ' \\d{4}-\\d{2} ' },
    { op: 'contains', arg: 'ISO' },
    { op: 'max_chars', arg: 200 },
    { op: 'no_refusal', arg: null },
  ]);
  assert.deepEqual(validateChecks(rule!.judge).errors, [], 'mined checks always validate');
  assert.deepEqual(wellFormedChecks('nope'), []);
});

test('the model miner reads each session once through the optimizer; a session whose reply is unusable gives nothing, the others still count', async () => {
  const model = scriptedModel((req) => {
    const text = String(req.messages[0]!.content);
    if (text.includes('broken session')) return 'I cannot answer in JSON, sorry.';
    return JSON.stringify({
      tasks: [{ intent: `Redo: ${text.match(/- (.*)/)![1]}`, rubric: 'Does it.', checks: [], satisfied: false }],
    });
  });
  const warnings: string[] = [];
  const ctx = {
    optimizer: model,
    mode: 'patch' as const,
    env: 'sleep',
    maxTokens: 1000,
    warn: (m: string) => warnings.push(m),
  };
  const digests = [
    digest({ session_id: 'a', user_prompts: ['rename the config keys'] }),
    digest({ session_id: 'b', user_prompts: ['broken session'] }),
    digest({ session_id: 'c', user_prompts: [] }),
  ];
  const { tasks, stats } = await mineWithModel(ctx, digests, { maxSessions: 10, maxTasks: 10 });
  assert.deepEqual(
    tasks.map((t) => t.intent),
    ['Redo: rename the config keys'],
  );
  assert.deepEqual(stats, { sessions: 2, failed: 1, dropped: 0 });
  assert.equal(
    model.requests.filter((r) => r.purpose === 'sleep_mine').length,
    3,
    'two sessions, one corrective retry',
  );
  assert.match(warnings[0]!, /sleep_mine call gave no usable reply during mining session b/);
  assert.match(String(model.requests[0]!.system), /practice tasks/);
});

test('dedup: the first record wins, sessions joined, the most resolved outcome kept, a hint only when every sighting agrees', () => {
  const a = taskRecord({ id: 't1', intent: 'x', outcome: 'unknown', source_sessions: ['s1'], skill_hint: 'dates' });
  const b = taskRecord({
    id: 't1',
    intent: 'other',
    outcome: 'fail',
    source_sessions: ['s2', 's1'],
    skill_hint: 'dates',
  });
  const c = taskRecord({ id: 't1', intent: 'x', outcome: 'success', source_sessions: ['s3'], skill_hint: '' });
  const [one] = dedupTasks([a, b]);
  assert.deepEqual(
    [one!.intent, one!.outcome, one!.source_sessions, one!.skill_hint],
    ['x', 'fail', ['s1', 's2'], 'dates'],
  );
  const [two] = dedupTasks([a, b, c]);
  assert.deepEqual([two!.outcome, two!.skill_hint], ['success', '']);
  assert.deepEqual(a.source_sessions, ['s1'], 'inputs are not changed');
});

test('splits by hash: the same task lands in the same split every night; dream tasks train; val and train never empty with two tasks or more; test never moved', () => {
  const tasks = Array.from({ length: 30 }, (_, i) => taskRecord({ id: `task_${i}`, intent: `t${i}` }));
  const once = assignSplits(tasks, { val: 0.34, test: 0.2, seed: 42 });
  const again = assignSplits([...tasks].reverse(), { val: 0.34, test: 0.2, seed: 42 });
  for (const t of once) assert.equal(again.find((x) => x.id === t.id)!.split, t.split);
  for (const t of once) {
    const b = splitBucket(42, t.id);
    assert.equal(t.split, b < 34 ? 'val' : b < 54 ? 'test' : 'train');
  }
  assert.equal(splitBucket(42, 'task_0'), Number(BigInt(`0x${sha256Hex('42task_0')}`) % 100n));
  const dream = assignSplits([taskRecord({ id: 'd', intent: 'x', origin: 'dream' })], {
    val: 1 - 1e-9,
    test: 0,
    seed: 42,
  });
  assert.equal(dream[0]!.split, 'train');
  const noVal = assignSplits(tasks.slice(0, 2), { val: 0, test: 0, seed: 42 });
  assert.deepEqual(noVal.map((t) => t.split).sort(), ['train', 'val']);
  const allVal = assignSplits(tasks.slice(0, 3), { val: 0.99, test: 0, seed: 42 });
  assert.deepEqual(allVal.map((t) => t.split).sort(), ['train', 'val', 'val']);
  const allTest = assignSplits(tasks.slice(0, 3), { val: 0, test: 0.99, seed: 42 });
  assert.ok(allTest.filter((t) => t.split === 'test').length >= 2, 'a task the hash puts in test stays there');
  assert.throws(() => assignSplits(tasks, { val: 0.6, test: 0.4, seed: 42 }), /below 1/);
  assert.throws(() => assignSplits(tasks, { val: -0.1, test: 0, seed: 42 }), /between 0 and 1/);
});

test('the target filter puts the tasks about the skill first (its name and headings strong, its frequent words weak); when none is about it, all are kept', () => {
  const skill =
    '---\nname: changelog-writer\n---\n# Changelog entries\n\n## Release notes\n\nEvery entry names the pull request and the version.\n';
  const path = '/home/dev/.claude/skills/changelog-writer/SKILL.md';
  const tasks = [
    taskRecord({ id: 'a', intent: 'Rename the database column' }),
    taskRecord({ id: 'b', intent: 'Write release notes for the version' }),
    taskRecord({ id: 'c', intent: 'Add a changelog entry for the pull request' }),
  ];
  assert.deepEqual(
    filterTasksForSkill(tasks, skill, path).map((t) => t.id),
    ['b', 'c'],
    'b meets two headings, c the name',
  );
  assert.deepEqual(
    filterTasksForSkill(tasks.slice(0, 1), skill, path).map((t) => t.id),
    ['a'],
  );
});

test('mine: the model miner first, the heuristic one when it finds nothing; merged, at most max_tasks, split', async () => {
  const silent = scriptedModel(() => JSON.stringify({ tasks: [] }));
  const ctx = { optimizer: silent, mode: 'patch' as const, env: 'sleep', maxTokens: 1000, warn: () => {} };
  const digests = [
    'Fix the flaky date test',
    'Fix the flaky date test',
    'Write the release notes',
    'Update the README install steps',
  ].map((p, i) => digest({ session_id: `s${i}`, user_prompts: [p] }));
  const got = await mine(digests, { maxTasks: 2, val: 0.34, test: 0, seed: 42, model: { ctx, maxSessions: 10 } });
  assert.equal(got.miner, 'heuristic');
  assert.equal(got.tasks.length, 2);
  assert.deepEqual(got.tasks[0]!.source_sessions, ['s0', 's1'], 'the same request in two sessions is one task');
  assert.deepEqual(got.tasks.map((t) => t.split).sort(), ['train', 'val']);
});
