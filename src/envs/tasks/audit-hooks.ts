/**
 * What the `tasks` env gives the audit of an accepted gain: a second scorer independent of its own
 * (a rule, `contains` on the golds, when the judge scores; the judge when a rule or a custom module
 * does), and variants of an item (its input recast; for the `choice` scorer, its options shuffled
 * with the expected label moved along).
 */
import type { ProbeForm } from '../../config/audit-schema.ts';
import { probeId, recast, shuffledOrder } from '../../audit/probes.ts';
import { goldList } from '../scoring/golds.ts';
import { judgeScorer } from '../scoring/judge.ts';
import { contains, normalizeLabel, pickLabel } from '../scoring/metrics.ts';
import { basicNormalize } from '../scoring/normalize.ts';
import { choicesOf } from '../scoring/scorer.ts';
import type { Item, SecondScorer } from '../types.ts';
import type { TasksOptions } from './options.ts';
import { replyOf } from '../qa.ts';

const SECOND_JUDGE = judgeScorer({
  type: 'judge',
  rubric: 'The answer is correct when it states the same final answer as a reference answer.',
  max_output_tokens: 1024,
});

export function tasksSecondScorer(o: TasksOptions): SecondScorer {
  if (o.scorer.type === 'judge')
    return {
      kind: 'rule',
      async score(t, item) {
        const golds = goldList(item.expected);
        return golds.length ? contains(t.predicted ?? '', golds, basicNormalize) : undefined;
      },
    };
  return {
    kind: 'judge',
    async score(t, item, ctx) {
      const golds = goldList(item.expected);
      const input = {
        prediction: t.predicted ?? '',
        golds,
        expected: item.expected,
        item,
        task: t.task ?? '',
        reply: replyOf(t),
      };
      return (await SECOND_JUDGE(input, ctx)).hard;
    },
  };
}

/** The item recast in `form`, under an id of its own; undefined when the form does not apply to it. */
export function tasksProbe(item: Item, form: ProbeForm, o: TasksOptions): Item | undefined {
  const id = probeId(item.id, form);
  if (form === 'shuffle_options')
    return o.scorer.type === 'choice' ? shuffled(item, o.scorer.choices_field, id) : undefined;
  if (typeof item.input !== 'string') return undefined;
  const input = recast(item.input, form, item.id);
  if (input === undefined) return undefined;
  return { ...item, id, input, [o.fields.input]: input };
}

/** The options in another order, each label kept in its place; an expected label follows its option. */
function shuffled(item: Item, field: string, id: string): Item | undefined {
  const raw = item[field];
  const choices = choicesOf(raw);
  if (choices.length < 2) return undefined;
  const order = shuffledOrder(choices.length, item.id);
  const moved = order.map((i) => choices[i]!);
  const newLabel = (label: string) => choices[order.indexOf(choices.findIndex((c) => c.label === label))]?.label;
  const golds = goldList(item.expected);
  const labels = new Set(choices.map((c) => c.label));
  // An expected option given by its text still names it; one given by its label moves with it.
  const byLabel = golds.length > 0 && golds.every((g) => labels.has(normalizeLabel(g)));
  const labelled = golds.map((g) => newLabel(pickLabel(g, choices)) ?? g);
  const expected = !byLabel ? item.expected : Array.isArray(item.expected) ? labelled : labelled[0];
  const value = Array.isArray(raw)
    ? raw.every((c) => typeof c === 'string')
      ? moved.map((c) => c.text)
      : moved.map((c, k) => ({ label: choices[k]!.label, text: c.text }))
    : Object.fromEntries(moved.map((c, k) => [choices[k]!.label, c.text]));
  return {
    ...item,
    id,
    [field]: value,
    expected,
  };
}
