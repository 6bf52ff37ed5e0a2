/**
 * Progressive disclosure in the simulated target: a rule in a reference file counts only for the
 * kinds of task SKILL.md says to open that file for, opening it costs its tokens, and its length
 * does not lengthen SKILL.md.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Item } from '../../../src/envs/types.ts';
import { demoPackage, env, hardScore, rollAll, textFiles } from './package-helpers.ts';

const { test } = await env.load();
const ofKind = (kind: string) => test.filter((i: Item) => i.type === kind);
const ISO = /^\d{4}-\d{2}-\d{2}$/;
const DATES_REF = textFiles({ 'references/dates.md': '# Dates\n\n- Write every date as YYYY-MM-DD.\n' });
const HEAD = '# Site answers\n\nAnswer each question with the fact asked for.\n\n';

async function isoShare(skill: string, files = DATES_REF): Promise<number> {
  const ts = await rollAll(ofKind('date'), skill, files);
  return ts.filter((t) => ISO.test(t.predicted ?? '')).length / ts.length;
}

describe('the sim target under a skill package', () => {
  it('applies a rule of a reference when SKILL.md says to open it for that kind, in any of several phrasings', async () => {
    for (const pointer of [
      'For dates, read references/dates.md.',
      'When the answer is a date, open references/dates.md first.',
      'Before answering with a date, consult `references/dates.md`.',
      'Dates: see [the date rules](references/dates.md).',
      'Check ./references/dates.md whenever a question asks for a date; names need nothing.',
    ])
      assert.equal(await isoShare(`${HEAD}${pointer}\n`), 1, pointer);
  });

  it('does not apply it without such a pointer: none, one for another kind, one that says where but not when, or a file not in the package', async () => {
    for (const skill of [
      HEAD,
      `${HEAD}For names, read references/dates.md.\n`,
      `${HEAD}More about dates is in references/dates.md.\n`,
      `${HEAD}Read references/dates.md.\n`,
      `${HEAD}For dates, read references/date-rules.md.\n`,
    ])
      assert.equal(await isoShare(skill), 0, skill);
    // A file of the package that is not text is never opened as one.
    const binary = new Map([
      ['references/dates.md', { kind: 'binary' as const, bytes: Buffer.from('YYYY-MM-DD\0'), mode: 0o644 }],
    ]);
    assert.equal(await isoShare(`${HEAD}For dates, read references/dates.md.\n`, binary), 0);
  });

  it('charges the tokens of each reference it opens, and only for the tasks it opens it for; the trace names the file', async () => {
    const skill = `${HEAD}For dates, read references/dates.md.\n`;
    const alone = await rollAll(test.slice(0, 12), skill);
    const withFile = await rollAll(test.slice(0, 12), skill, DATES_REF);
    const text = DATES_REF.get('references/dates.md');
    const cost = Math.ceil((text?.kind === 'text' ? text.text : '').length / 4);
    assert.ok(alone.some((t) => t.taskType === 'date') && alone.some((t) => t.taskType !== 'date'));
    for (const [i, t] of withFile.entries()) {
      const opened = t.taskType === 'date';
      assert.equal(t.usage!.input - alone[i]!.usage!.input, opened ? cost : 0, `${t.id} (${t.taskType})`);
      assert.deepEqual(
        t.traces?.map((r) => r.files),
        opened ? [['references/dates.md']] : undefined,
        t.id,
      );
    }
  });

  it('overlooks a reference rule by the length of the reference, not by the length of SKILL.md', async () => {
    const skill = `${HEAD}- Write amounts with exactly two decimals (12.50, not 12.5).\n- Numbers are written without thousands separators.\nFor amounts of money, read references/money.md.\n`;
    const rule = '- Amounts of money end with a currency code such as USD.\n';
    const filler = 'The finance office imports these amounts into its ledger every night. '.repeat(60);
    const money = ofKind('money');
    const short = await rollAll(money, skill, textFiles({ 'references/money.md': rule }));
    const long = await rollAll(money, skill, textFiles({ 'references/money.md': `${rule}\n${filler}\n` }));
    assert.ok(short.every((t) => t.predicted!.endsWith(' USD') && /^\d+\.\d\d USD$/.test(t.predicted!)));
    // The long reference's own rule slips now and then; SKILL.md's rules, read on the same tasks, never do.
    const missed = long.filter((t) => !t.predicted!.endsWith(' USD')).length;
    assert.ok(missed > 0 && missed < long.length, `${missed} of ${long.length}`);
    assert.ok(
      long.every((t) => /^\$?\d+\.\d\d( USD)?$/.test(t.predicted!)),
      'two decimals, no separator',
    );
  });

  it('answers a package the same way every time: answers, usage and traces', async () => {
    const demo = demoPackage();
    const skill = `${demo.skill}\nFor percentages, read references/percentages.md.\n`;
    const first = await rollAll(test, skill, demo.files);
    assert.ok(first.some((t) => t.traces?.length));
    assert.deepEqual(await rollAll(test, skill, new Map(demo.files)), first);
  });

  it('scores the demo package higher once its rules live in references that SKILL.md says when to open', async () => {
    const demo = demoPackage();
    const before = hardScore(await rollAll(test, demo.skill, demo.files));
    const sections = demo.skill.split(/\n(?=## )/);
    const kept = sections.filter((s) => /^## (How to answer|Names|Percentages)/.test(s) || !s.startsWith('## '));
    const moved = new Map(demo.files);
    for (const [heading, file] of [
      ['Dates', 'references/dates.md'],
      ['Money', 'references/money.md'],
      ['Measurements', 'references/measurements.md'],
      ['Counts', 'references/counts.md'],
    ] as const) {
      const section = sections.find((s) => s.startsWith(`## ${heading}`))!;
      moved.set(file, { kind: 'text', text: section.replace(/^## /, '# '), mode: 0o644 });
    }
    moved.set('references/names.md', {
      kind: 'text',
      text: '# Names\n\n- Write names entirely in lower-case letters.\n',
      mode: 0o644,
    });
    const pointers = [
      'For dates, read references/dates.md.',
      'For amounts of money, read references/money.md.',
      'For measurements, read references/measurements.md.',
      'For counts, read references/counts.md.',
      'For names, read references/names.md.',
      'For percentages, read references/percentages.md.',
    ];
    const after = hardScore(await rollAll(test, `${kept.join('\n')}\n${pointers.join('\n')}\n`, moved));
    // The same rules left in the long SKILL.md (and pointed to as well) are still overlooked.
    const inline = hardScore(
      await rollAll(
        test,
        `${demo.skill}\n${pointers.join('\n')}\n- Write names entirely in lower-case letters.\n`,
        demo.files,
      ),
    );
    assert.ok(before < 0.3, `before ${before}`);
    assert.equal(after, 1);
    assert.ok(inline < 0.7, `inline ${inline}`);
  });
});
