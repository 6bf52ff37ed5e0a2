/** The cores of the second scorer and the probes, the forms a probe makes, and the `tasks` env's variants and second scorer. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { probeCheck, secondScorerCheck, widening } from '../../src/audit/gain.ts';
import { recast, shuffledOrder, swapDelimiters, variantOf } from '../../src/audit/probes.ts';
import { tasksProbe, tasksSecondScorer } from '../../src/envs/tasks/audit-hooks.ts';
import { TasksOptionsSchema } from '../../src/envs/tasks/options.ts';
import type { ChatModel, ChatRequest } from '../../src/model/types.ts';

const pair = (current: number, candidate: number) => ({ current, candidate });

describe('the second scorer check', () => {
  it('flags a gain the second scorer mostly does not see, naming the items it does not see', () => {
    const items = [
      { item: 'a', training: pair(0, 1), second: pair(0, 1) },
      { item: 'b', training: pair(0, 1), second: pair(0, 0) },
      { item: 'c', training: pair(0, 1), second: pair(0, 0) },
    ];
    const check = secondScorerCheck(items, 0.9, 'rule scorer');
    assert.equal(check.verdict, 'flag');
    assert.match(check.summary, /\+3 under training's scorer, \+1 under the rule scorer on 3 items/);
    assert.deepEqual(
      check.findings.map((f) => f.item),
      ['b', 'c'],
    );
  });

  it('passes a gain both scorers see, and a step with no gain to check', () => {
    const items = [
      { item: 'a', training: pair(0, 1), second: pair(0, 1) },
      { item: 'b', training: pair(1, 0), second: pair(1, 0) },
      { item: 'c', training: pair(0, 1), second: pair(0, 1) },
    ];
    assert.equal(secondScorerCheck(items, 0.9, 'judge model').verdict, 'pass');
    assert.equal(secondScorerCheck([], 0.9, 'judge model').verdict, 'pass');
    // The threshold is the config's: 2 of 3 kept passes at 0.5.
    const partly = [...items.slice(0, 1), { item: 'd', training: pair(0, 1), second: pair(0, 0) }, items[2]!];
    assert.equal(secondScorerCheck(partly, 0.5, 'judge model').verdict, 'pass');
    assert.equal(secondScorerCheck(partly, 0.9, 'judge model').verdict, 'flag');
  });
});

describe('the probe check', () => {
  const probed = (item: string, variantCandidate: number) => ({
    item,
    form: 'reframe' as const,
    original: pair(0, 1),
    variant: pair(0, variantCandidate),
  });

  it('flags a gain lost on recast items beyond the margin on average', () => {
    const check = probeCheck([probed('a', 0), probed('b', 0), probed('c', 1)], 0.15);
    assert.equal(check.verdict, 'flag');
    assert.deepEqual(
      check.findings.map((f) => f.item),
      ['a', 'b'],
    );
    assert.match(check.summary, /2 of 3 recast items lose more recast/);
  });

  it('passes a gain that survives, one within the margin, and says when too few items were recast', () => {
    assert.equal(probeCheck([probed('a', 1), probed('b', 1)], 0.15).verdict, 'pass');
    const eight = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((i) => probed(i, 1));
    assert.equal(probeCheck([...eight, probed('h', 0)], 0.15).verdict, 'pass', 'one of eight is within the margin');
    const one = probeCheck([probed('a', 0)], 0.15);
    assert.equal(one.verdict, 'pass');
    assert.match(one.summary, /too few recast items/);
    // What the current skill lost on the variant already is not the candidate's.
    assert.equal(widening({ item: 'a', form: 'wrap', original: pair(1, 1), variant: pair(0, 0) }), 0);
    // Nor is a variant the old skill already answered: the candidate's gain there had no room.
    assert.equal(widening({ item: 'a', form: 'wrap', original: pair(0, 1), variant: pair(1, 1) }), 0);
    assert.equal(widening({ item: 'a', form: 'wrap', original: pair(0, 1), variant: pair(0, 0) }), 1);
  });
});

describe('the forms of a probe', () => {
  const question = 'When did Maple Street Depot open?';

  it('keep the request whole, vary by item, and are the same for an item each time', () => {
    for (const form of ['reframe', 'wrap'] as const) {
      const once = recast(question, form, 'val-0001')!;
      assert.ok(once.includes(question) && once !== question, form);
      assert.ok(!once.startsWith(question), `${form} changes how the request begins`);
      assert.equal(recast(question, form, 'val-0001'), once);
    }
    const leads = new Set(['a', 'b', 'c', 'd', 'e', 'f'].map((k) => recast(question, 'reframe', k)));
    assert.ok(leads.size > 1);
  });

  it('swap delimiters only where the request has some, and leave the options to the env', () => {
    assert.equal(recast(question, 'delimiters', 'x'), undefined);
    assert.equal(
      swapDelimiters('Context: the "north" wing\n- first\n- second'),
      "Context - the 'north' wing\n* first\n* second",
    );
    assert.equal(recast(question, 'shuffle_options', 'x'), undefined);
  });

  it('shuffle options into another order, never the same one', () => {
    for (const key of ['a', 'b', 'c', 'd', 'e']) {
      const order = shuffledOrder(4, key);
      assert.deepEqual([...order].sort(), [0, 1, 2, 3]);
      assert.notDeepEqual(order, [0, 1, 2, 3]);
    }
    assert.deepEqual(shuffledOrder(2, 'z'), [1, 0]);
  });
});

describe("the tasks env's variants and second scorer", () => {
  const choice = TasksOptionsSchema.parse({ train_file: 'x.jsonl', scorer: { type: 'choice' } });
  // An MMLU-shaped record, as the tasks env holds it: options as a list of texts, the answer a letter.
  const mmlu = {
    id: 'q7',
    input: 'Which planet is largest?',
    choices: ['Mars', 'Jupiter', 'Venus', 'Mercury'],
    expected: 'B',
  };

  it('shuffle the options and move the expected letter with its option', () => {
    const v = tasksProbe(mmlu, 'shuffle_options', choice)!;
    assert.equal(v.id, 'q7~shuffle_options');
    const options = v.choices as string[];
    assert.deepEqual([...options].sort(), [...mmlu.choices].sort());
    assert.notDeepEqual(options, mmlu.choices);
    assert.equal(options['ABCD'.indexOf(String(v.expected))], 'Jupiter');
    // Labelled options keep their labels in place; an answer given as the option's text still names it.
    const labelled = {
      ...mmlu,
      choices: mmlu.choices.map((text, k) => ({ label: 'ABCD'[k]!, text })),
      expected: 'Jupiter',
    };
    const w = tasksProbe(labelled, 'shuffle_options', choice)!;
    assert.deepEqual(
      (w.choices as { label: string }[]).map((c) => c.label),
      ['A', 'B', 'C', 'D'],
    );
    assert.equal(w.expected, 'Jupiter');
  });

  it('recast the input for other scorers, and make no option shuffle without options', () => {
    const exact = TasksOptionsSchema.parse({ train_file: 'x.jsonl' });
    const v = tasksProbe({ id: 'q1', input: 'Name the capital of France.', expected: 'Paris' }, 'wrap', exact)!;
    assert.ok(String(v.input).includes('Name the capital of France.') && v.input !== 'Name the capital of France.');
    assert.equal(v.expected, 'Paris');
    assert.equal(tasksProbe({ id: 'q1', input: 'x', expected: 'y' }, 'shuffle_options', exact), undefined);
  });

  it('a worker makes a variant again from its id and its data', () => {
    const exact = TasksOptionsSchema.parse({ train_file: 'x.jsonl' });
    const items = new Map([['q1', { id: 'q1', input: 'Name the capital of France.', expected: 'Paris' }]]);
    const env = {
      probe: (item: typeof items extends Map<string, infer I> ? I : never, form: 'wrap') =>
        tasksProbe(item, form, exact),
    };
    assert.deepEqual(variantOf('q1~wrap', items, env as never), tasksProbe(items.get('q1')!, 'wrap', exact));
    assert.equal(variantOf('q1~nonsense', items, env as never), undefined);
    assert.equal(variantOf('q2~wrap', items, env as never), undefined);
  });

  it('score again with a rule when the judge scores, and with the judge when a rule does', async () => {
    const judged = tasksSecondScorer(TasksOptionsSchema.parse({ train_file: 'x.jsonl', scorer: { type: 'judge' } }));
    assert.equal(judged.kind, 'rule');
    const t = { id: 'q1', hard: 1, soft: 1, predicted: 'It is Paris.' };
    assert.equal(await judged.score(t, { id: 'q1', expected: 'Paris' }, {}), 1);
    assert.equal(await judged.score({ ...t, predicted: 'Lyon' }, { id: 'q1', expected: 'Paris' }, {}), 0);
    assert.equal(await judged.score(t, { id: 'q1' }, {}), undefined, 'no gold: it cannot tell');

    const ruled = tasksSecondScorer(TasksOptionsSchema.parse({ train_file: 'x.jsonl' }));
    assert.equal(ruled.kind, 'judge');
    const asked: ChatRequest[] = [];
    const judge = {
      id: 'fake:judge',
      complete: async (req: ChatRequest) => {
        asked.push(req);
        return {
          text: '{"verdict": "incorrect", "score": 0, "reason": "not the reference"}',
          usage: { input: 1, output: 1, cached: 0, reasoning: 0 },
          latencyMs: 0,
          from: 'provider' as const,
        };
      },
    } as unknown as ChatModel;
    assert.equal(
      await ruled.score({ ...t, task: 'Name the capital of France.' }, { id: 'q1', expected: 'Paris' }, { judge }),
      0,
    );
    assert.equal(asked[0]!.purpose, 'judge');
    assert.match(String(asked[0]!.messages[0]!.content), /Paris[\s\S]*It is Paris\./);
  });
});
