import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildScheduler } from '../../src/engine/lr-schedulers.ts';
import { editBudget, OptimizerChosenBudget, ScheduledBudget } from '../../src/engine/stages/edit-budget.ts';
import { rankAndSelect } from '../../src/engine/stages/select.ts';
import { changesOf, itemsOf, patchReplySchema } from '../../src/protocol/optimizer.ts';
import { scriptedModel } from '../helpers/models.ts';
import { optimizerContext } from '../helpers/optimizer.ts';

// A patch as an optimizer of a package writes it: text ops on two files and both file ops.
const REPLY = {
  reasoning: 'move the date rule into a reference',
  edits: [
    { op: 'replace', target: 'Use ISO dates.', content: 'Dates: see references/dates.md.' },
    { op: 'append', file: 'references/forms.md', content: '- Dates are ISO 8601.' },
    { op: 'create_file', file: 'references/dates.md', content: '# Dates\n' },
    { op: 'delete_file', file: 'references/old.md' },
    { op: 'insert_after', file: 'SKILL.md', target: '# Skill', content: 'Read the references.' },
  ],
};
const items = changesOf('patch', itemsOf('patch', patchReplySchema('patch').parse(REPLY))).items;
const evidence = {
  skill: 'S',
  items,
  rolloutHard: 0.5,
  rolloutSoft: 0.5,
  rolloutN: 4,
  stepBufferText: '',
  metaSkill: '',
};

describe('every op counts against the edit budget', () => {
  it('file ops reach the budget as edits, their file kept', () => {
    assert.deepEqual(
      items.map((i) => [i.op, i.file]),
      [
        ['replace', undefined],
        ['append', 'references/forms.md'],
        ['create_file', 'references/dates.md'],
        ['delete_file', 'references/old.md'],
        ['insert_after', 'SKILL.md'],
      ],
    );
  });

  it("a schedule's budget of 2 keeps 2 of the 5, the file ops ranked among the rest", async () => {
    const model = scriptedModel(() => JSON.stringify({ reasoning: 'x', selected_indices: [2, 3, 0] }));
    const opt = optimizerContext(model);
    const budget = editBudget('fixed', buildScheduler('constant', 2, 2, 10), opt);
    assert.ok(budget instanceof ScheduledBudget);
    const { budget: k } = await budget.next();
    const selected = await rankAndSelect(opt, 'S', items, k, '');
    assert.deepEqual(
      selected.items.map((i) => (i as { op: string }).op),
      ['create_file', 'delete_file'],
    );
    assert.match(String(model.requests[0]!.messages[0]!.content), /\(5, budget=2\)/);
  });

  it('a budget of 4 leaves one of the 5 out: no op is free', async () => {
    const opt = optimizerContext(
      scriptedModel(() => JSON.stringify({ reasoning: 'x', selected_indices: [0, 1, 2, 3, 4] })),
    );
    const selected = await rankAndSelect(opt, 'S', items, 4, '');
    assert.equal(selected.items.length, 4);
    assert.equal(selected.how, 'ranked');
  });

  it("the optimizer's own budget is bounded by all 5 changes", async () => {
    const opt = optimizerContext(scriptedModel(() => '{"learning_rate": 9, "reasoning": "all of them"}'));
    const budget = editBudget('autonomous', buildScheduler('autonomous', 4, 2, 10), opt);
    assert.ok(budget instanceof OptimizerChosenBudget);
    const { budget: k, decision } = await budget.next(evidence);
    assert.equal(k, 5);
    assert.equal(decision.available_update_items, 5);
    assert.equal(decision.clamped, true);
  });
});
