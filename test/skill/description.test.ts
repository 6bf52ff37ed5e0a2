/**
 * The description as an edit: `set_description` replaces the front matter's description and
 * nothing else, within the Agent Skills limits, and only in a step that trains it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { frontMatterProblems, listedText, skillListing } from '../../src/skill/agent-skill.ts';
import { withDescription } from '../../src/skill/description.ts';
import { applyPackageEdits } from '../../src/skill/package/edits.ts';

const SKILL = `---
name: workbook-charts
# kept as it is
description: Helps with data.
license: Complete terms in LICENSE.txt
metadata:
  version: "1.2"
---

# Workbook charts

Build the chart on its own sheet.
`;

describe('set_description', () => {
  it('replaces the description alone: the other keys, their comments and the body stay', () => {
    const r = withDescription(SKILL, 'Build charts: line, bar and pie.\n  Use when asked for a "chart".');
    assert.ok('text' in r);
    assert.equal(skillListing(r.text).description, 'Build charts: line, bar and pie. Use when asked for a "chart".');
    assert.deepEqual(frontMatterProblems(r.text), []);
    assert.equal(
      r.text.slice(r.text.indexOf('\n---\n')),
      SKILL.slice(SKILL.indexOf('\n---\n')),
      'the body, byte for byte',
    );
    assert.match(r.text, /# kept as it is\n/);
    assert.match(r.text, /license: Complete terms in LICENSE\.txt\nmetadata:\n {2}version: "1\.2"\n/);
  });

  it('refuses what the Agent Skills rules refuse, and a skill with no front matter', () => {
    assert.match((withDescription(SKILL, 'x'.repeat(1025)) as { problem: string }).problem, /1,025 characters/);
    assert.match((withDescription(SKILL, 'use <this>') as { problem: string }).problem, /'<' or '>'/);
    assert.match((withDescription(SKILL, '  ') as { problem: string }).problem, /empty/);
    assert.match((withDescription('# no front matter\n', 'ok') as { problem: string }).problem, /no front matter/);
  });

  it('applies only in a description step, once a patch, to SKILL.md', () => {
    const edit = { op: 'set_description', content: 'Build charts in Excel workbooks.' };
    const body = applyPackageEdits({ skill: SKILL }, [edit]);
    assert.equal(body.reports[0]!.status, 'skipped_protected_region');
    assert.equal(body.package.skill, SKILL);
    const step = applyPackageEdits(
      { skill: SKILL },
      [
        edit,
        { ...edit, content: 'Another.' },
        { op: 'set_description', file: 'references/a.md', content: 'x' },
        { op: 'set_description', content: 'a <b>' },
      ],
      { description: 'editable' },
    );
    assert.deepEqual(
      step.reports.map((r) => r.status),
      ['applied_set_description', 'skipped_overlapping_edit', 'skipped_bad_path', 'skipped_overlapping_edit'],
    );
    assert.equal(skillListing(step.package.skill).description, 'Build charts in Excel workbooks.');
    const bad = applyPackageEdits({ skill: SKILL }, [{ op: 'set_description', content: 'a <b>' }], {
      description: 'editable',
    });
    assert.equal(bad.reports[0]!.status, 'skipped_bad_description');
  });

  it('a body edit before it keeps its place when the front matter grows', () => {
    const r = applyPackageEdits(
      { skill: SKILL },
      [
        { op: 'append', content: 'Label both axes.' },
        { op: 'set_description', content: 'A much longer description than the one before, to move the body.' },
        { op: 'insert_after', target: 'Label both axes.', content: 'Title the chart.' },
      ],
      { description: 'editable' },
    );
    assert.deepEqual(
      r.reports.map((x) => x.status),
      ['applied_append', 'applied_set_description', 'skipped_overlapping_edit'],
      'the third edit still sees the first one where it now is',
    );
  });

  it("sets, keeps or removes Claude Code's when_to_use beside the description, within its listing's 1,536 characters", () => {
    const set = withDescription(SKILL, 'Build charts in workbooks.', 'Use when the user wants a chart of sales.');
    assert.ok('text' in set);
    const listed = skillListing(set.text);
    assert.equal(listed.whenToUse, 'Use when the user wants a chart of sales.');
    assert.equal(
      listedText(listed),
      'Build charts in workbooks. - Use when the user wants a chart of sales.',
      'as Claude Code lists it',
    );
    assert.equal(listedText(listed, false), 'Build charts in workbooks.', 'as Codex and Copilot list it');
    assert.deepEqual(frontMatterProblems(set.text), [], 'a key Claude Code reads is not a broken package');

    const kept = withDescription(set.text, 'Charts.');
    assert.ok('text' in kept);
    assert.equal(skillListing(kept.text).whenToUse, 'Use when the user wants a chart of sales.', 'left out: kept');
    const removed = withDescription(set.text, 'Charts.', '');
    assert.ok('text' in removed);
    assert.equal(skillListing(removed.text).whenToUse, undefined);
    assert.doesNotMatch(removed.text, /when_to_use/);

    const long = withDescription(SKILL, 'd'.repeat(1000), 'w'.repeat(600));
    assert.match(
      (long as { problem: string }).problem,
      /1,603 characters; Claude Code cuts a skill's listing at 1,536/,
    );
    assert.match((withDescription(SKILL, 'ok', 'when <x>') as { problem: string }).problem, /'when_to_use' holds '<'/);
    assert.match(
      frontMatterProblems(`---\nname: a\ndescription: b\nwhen_to_use: ${'w'.repeat(1600)}\n---\n`)[0]!,
      /1,536/,
    );

    const edit = applyPackageEdits(
      { skill: SKILL },
      [{ op: 'set_description', content: 'Build charts.', when_to_use: 'When a chart is asked for.' }],
      { description: 'editable' },
    );
    assert.equal(edit.reports[0]!.status, 'applied_set_description');
    assert.equal(skillListing(edit.package.skill).whenToUse, 'When a chart is asked for.');
  });
});
