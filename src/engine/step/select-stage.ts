/** ④ Select: the changes the step's edit budget keeps, ranked by the optimizer when there are more (none kept back in the full-rewrite mode). */
import { PAYLOAD, type UpdateItem } from '../../protocol/optimizer.ts';
import { appendLine } from '../../run/atomic.ts';
import type { Merged } from '../stages/aggregate.ts';
import { rankAndSelect } from '../stages/select.ts';
import type { Rolled } from './rollout-stage.ts';
import type { StepScope } from './step-scope.ts';
import { ofChanges } from './wording.ts';
import { isDescriptionEdit } from '../../skill/description.ts';

export async function selectStage(s: StepScope, merged: Merged, rolled: Rolled): Promise<UpdateItem[]> {
  const { settings, opt, dir } = s.ctx;
  // A step edits its target only: the description (`set_description`), or the body and files.
  const items = merged.items.filter((i) => isDescriptionEdit(i) === (s.target === 'description'));
  s.stages.start('select', ofChanges(settings.mode, items.length));
  let budget: number | null = null;
  let selected = items;
  let how = 'all';
  const chosen = await s.budget?.next({
    skill: s.skill,
    items,
    rolloutHard: rolled.score.hard,
    rolloutSoft: rolled.score.soft,
    rolloutN: rolled.trajectories.length,
    stepBufferText: s.memory.text,
    metaSkill: s.plan.metaSkill,
  });
  if (chosen?.decision) {
    s.files.write('lr_decision.json', chosen.decision);
    appendLine(dir.path('lr_history.jsonl'), JSON.stringify({ step: s.step, epoch: s.epoch, ...chosen.decision }));
  }
  if (chosen) {
    budget = chosen.budget;
    ({ items: selected, how } = await rankAndSelect(opt, s.skill, items, budget, s.plan.metaSkill, merged.rankedFor));
  }
  s.files.write('ranked_edits.json', {
    reasoning: `${merged.reasoning} [${how}: ${selected.length}/${items.length}]`,
    [PAYLOAD[settings.mode].key]: selected,
  });
  s.stages.finish(
    'select',
    `${items.length} -> ${ofChanges(settings.mode, selected.length)} (${budget === null ? 'no limit: a rewrite' : `at most ${budget} this step`})`,
    { budget, lr_control: settings.lr.control },
  );
  s.record.select({
    n_edits_merged: items.length,
    n_edits_ranked: selected.length,
    edit_budget: budget,
    lr_control_mode: settings.lr.control,
    lr_decision: chosen?.decision,
    support_counts: selected.map((i) => i.support_count ?? null),
  });
  return selected;
}
