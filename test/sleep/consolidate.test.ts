import assert from 'node:assert/strict';
import { test } from 'node:test';
import '../../src/builtins.ts';
import { InfraError, type ChatRequest } from '../../src/model/types.ts';
import { consolidate, type ConsolidateInput, type ConsolidateSettings } from '../../src/sleep/night/consolidate.ts';
import { Evidence } from '../../src/sleep/night/evidence.ts';
import { rulesOf, withRules } from '../../src/sleep/documents/learned-block.ts';
import { SleepConfigSchema } from '../../src/sleep/config.ts';
import { buildNightModels, chooseModels } from '../../src/sleep/night/models.ts';
import { REPLAY_PROMPT_MARKER } from '../../src/sleep/replay/marker.ts';
import { taskRecord, type TaskRecord } from '../../src/sleep/tasks/task.ts';
import { scriptedModel } from '../helpers/models.ts';

const DOC = '---\nname: depot\ndescription: Depot records.\n---\n\n# Depot\n\nAnswer questions about the depot.\n';
const SETTINGS: ConsolidateSettings = {
  editBudget: 4,
  samples: 1,
  gate: true,
  scoring: { metric: 'hard', mixedWeight: 0.5 },
  noRegression: false,
  minibatchSize: 8,
  workers: 4,
  seed: 42,
};

const ruleTask = (id: string, intent: string, wants: string, split: TaskRecord['split']) =>
  taskRecord({
    id,
    intent,
    split,
    reference_kind: 'rule',
    judge: { kind: 'rule', checks: [{ op: 'contains', arg: wants }] },
  });

/** An optimizer that proposes `edits` from every failure minibatch and merges by concatenation. */
function optimizer(edits: Record<string, unknown>[]) {
  return scriptedModel((req) => {
    if (req.purpose === 'analyst') {
      const failure = String(req.system).includes('got the task wrong');
      return JSON.stringify({ failure_summary: [], patch: { reasoning: 'r', edits: failure ? edits : [] } });
    }
    if (req.purpose === 'merge') return JSON.stringify({ reasoning: 'm', edits });
    if (req.purpose === 'ranking') return JSON.stringify({ reasoning: 'k', selected_indices: [0, 1, 2, 3] });
    throw new Error(`unexpected ${req.purpose}`);
  }, 'scripted:optimizer');
}

/** A target that answers "A" when the documents hold `rule`, else "B". */
function styleTarget(rule: string, fail?: (req: ChatRequest) => boolean) {
  return scriptedModel((req) => {
    if (fail?.(req)) return new InfraError('the server failed', 'server');
    return String(req.system).includes(rule) ? 'A' : 'B';
  }, 'scripted:target');
}

function input(
  tasks: TaskRecord[],
  target: ReturnType<typeof scriptedModel>,
  opt: ReturnType<typeof scriptedModel>,
  settings: Partial<ConsolidateSettings> = {},
): ConsolidateInput {
  return {
    name: 'depot',
    kind: 'skill',
    text: DOC,
    others: [],
    tasks,
    models: {
      target,
      judge: target,
      opt: { optimizer: opt, mode: 'patch', env: 'sleep', maxTokens: 4000, warn: () => {} },
    },
    settings: { ...SETTINGS, ...settings },
    evidence: new Evidence(),
  };
}

test('a candidate better on the val tasks is accepted: its rule lands in the learned block, the rest of the document byte for byte', async () => {
  const tasks = [
    ruleTask('t1', 'q1', 'A', 'train'),
    ruleTask('t2', 'q2', 'A', 'train'),
    ruleTask('v1', 'q3', 'A', 'val'),
    ruleTask('v2', 'q4', 'A', 'val'),
  ];
  const target = styleTarget('Prefer style A');
  const r = await consolidate(input(tasks, target, optimizer([{ op: 'append', content: '- Prefer style A.' }])));
  assert.equal(r.action, 'accept_new_best');
  assert.equal(r.accepted, true);
  assert.deepEqual([r.baseline!.gate, r.candidate!.gate, r.train!.hard], [0, 1, 0]);
  assert.ok(r.proposedText.startsWith(DOC));
  assert.equal(rulesOf(r.proposedText), '- Prefer style A.');
  assert.deepEqual(
    r.deltas.map((d) => d.status),
    ['improved', 'improved'],
  );
  const attempt = target.requests[0]!;
  assert.equal(attempt.purpose, 'sleep_attempt');
  assert.ok(
    String(attempt.messages[0]!.content).startsWith(`${REPLAY_PROMPT_MARKER}\n\nq`),
    'every replay carries the marker',
  );
  assert.ok(String(attempt.system).includes('# Depot'), 'the target reads the document');
});

test('certification is refused when val is train (too few tasks to hold any out): reject_unverified, nothing proposed', async () => {
  const tasks = [ruleTask('t1', 'q1', 'A', 'train'), ruleTask('t2', 'q2', 'A', 'train')];
  const r = await consolidate(
    input(tasks, styleTarget('Prefer style A'), optimizer([{ op: 'append', content: '- Prefer style A.' }])),
  );
  assert.deepEqual([r.action, r.accepted, r.leaked], ['reject_unverified', false, true]);
  assert.equal(r.proposedText, DOC);
  assert.notEqual(r.candidateText, DOC, 'the suggestion is kept for the report');
});

test('no regression: a candidate better on the whole but worse on one val task is refused when the option is on, taken when off', async () => {
  const tasks = [
    ruleTask('t1', 'q1', 'A', 'train'),
    ruleTask('v1', 'q2', 'A', 'val'),
    ruleTask('v2', 'q3', 'A', 'val'),
    ruleTask('v3', 'q4', 'B', 'val'),
  ];
  const edits = [{ op: 'append', content: '- Prefer style A.' }];
  const strict = await consolidate(
    input(tasks, styleTarget('Prefer style A'), optimizer(edits), { noRegression: true }),
  );
  assert.deepEqual([strict.action, strict.accepted, strict.blockedByRegression], ['reject', false, true]);
  assert.deepEqual(
    strict.deltas.map((d) => d.status),
    ['improved', 'improved', 'regressed'],
  );
  assert.match(strict.reason, /worse on 1 val task/);
  const lenient = await consolidate(input(tasks, styleTarget('Prefer style A'), optimizer(edits)));
  assert.deepEqual([lenient.action, lenient.accepted], ['accept_new_best', true]);
});

test('a tie is a reject; with the gate off every applied edit is taken unchecked', async () => {
  const tasks = [ruleTask('t1', 'q1', 'A', 'train'), ruleTask('v1', 'q2', 'C', 'val')];
  const tie = await consolidate(
    input(tasks, styleTarget('Prefer style A'), optimizer([{ op: 'append', content: '- Prefer style A.' }])),
  );
  assert.deepEqual([tie.action, tie.accepted, tie.proposedText], ['reject', false, DOC]);
  const greedy = await consolidate(
    input(tasks, styleTarget('Prefer style A'), optimizer([{ op: 'append', content: '- Prefer style A.' }]), {
      gate: false,
    }),
  );
  assert.deepEqual([greedy.action, greedy.accepted], ['greedy_applied', true]);
  assert.equal(greedy.baseline, undefined, 'no val task is replayed without the gate');
});

test('an edit aimed at the hand-written text is refused, so nothing changes', async () => {
  const tasks = [ruleTask('t1', 'q1', 'A', 'train'), ruleTask('v1', 'q2', 'A', 'val')];
  const r = await consolidate(
    input(
      tasks,
      styleTarget('Prefer style A'),
      optimizer([{ op: 'replace', target: 'Answer questions about the depot.', content: 'Prefer style A.' }]),
    ),
  );
  assert.equal(r.action, 'no_edits');
  assert.deepEqual(
    r.edits.map((e) => e.status),
    ['skipped_protected_region'],
  );
  assert.equal(r.proposedText, DOC);
});

test('infrastructure errors are never scored: a task whose call failed is left out of the score; with K attempts, the ones that ran count', async () => {
  const tasks = [
    ruleTask('t1', 'q1', 'A', 'train'),
    ruleTask('t2', 'broken', 'A', 'train'),
    ruleTask('v1', 'q2', 'A', 'val'),
  ];
  const target = styleTarget('Prefer style A', (req) => String(req.messages[0]!.content).includes('broken'));
  const r = await consolidate(input(tasks, target, optimizer([{ op: 'append', content: '- Prefer style A.' }])));
  assert.deepEqual([r.train!.n, r.train!.errors], [1, 1]);
  assert.equal(r.accepted, true);

  const flaky = scriptedModel(
    (req) => (req.sample === 1 ? new InfraError('timeout', 'timeout') : req.sample === 2 ? 'B' : 'A'),
    'scripted:k',
  );
  const k = await consolidate(
    input([ruleTask('t1', 'q1', 'A', 'train'), ruleTask('v1', 'q2', 'A', 'val')], flaky, optimizer([]), { samples: 3 }),
  );
  assert.deepEqual(
    [k.train!.hard, k.train!.soft, k.train!.errors],
    [0, 0.5, 0],
    'attempts 0 and 2 ran: one passed, one failed; all must pass for hard',
  );
  const samples = flaky.requests.filter((q) => String(q.messages[0]!.content).includes('q1')).map((q) => q.sample);
  assert.deepEqual(samples.sort(), [0, 1, 2], 'each attempt is its own sample (its own cache key)');
});

test('on the simulator, a night of date tasks learns the date convention through the engine stages (reflect, merge, select, update, gate)', async () => {
  const questions = [
    'When did Maple Street Depot open?',
    'When was Harbor Point Clinic inspected?',
    'When did North Ridge Library open?',
    'When was the lease of Cedar Lane School signed?',
    'When did Granite Hall open?',
    'When was Pine Hollow Lodge inspected?',
  ];
  const dates = ['2019-03-05', '2021-11-30', '1999-01-07', '2004-06-12', '2011-02-03', '2016-08-21'];
  const tasks = questions.map((q, i) => ruleTask(`d${i}`, q, dates[i]!, i < 4 ? 'train' : 'val'));
  const choice = chooseModels({
    config: SleepConfigSchema.parse({
      model: { backend: 'sim', optimizer: { options: { vague: 0, harmful: 0, irrelevant: 0 } } },
    }),
    sources: new Map(),
    file: '',
  });
  const models = await buildNightModels(choice, { elapsedMinutes: () => 0, warn: () => {} });
  try {
    const doc = withRules(DOC, '- Keep answers short.');
    const r = await consolidate({
      ...input(
        tasks,
        scriptedModel(() => ''),
        scriptedModel(() => ''),
      ),
      text: doc,
      models: { target: models.target, judge: models.judge, opt: models.opt },
    });
    assert.equal(r.action, 'accept_new_best');
    assert.deepEqual([r.baseline!.gate, r.candidate!.gate], [0, 1]);
    assert.match(rulesOf(r.proposedText), /^- Keep answers short\.\n- .*(YYYY-MM-DD|ISO 8601|year-month-day)/);
    const purposes = new Set(Object.keys(models.stack.ledger.byPurpose()));
    assert.ok(purposes.has('sleep_attempt') && purposes.has('analyst'), [...purposes].join(','));
  } finally {
    models.close();
  }
});
