import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countTokens } from '../../src/skill/document.ts';
import { applyEdits, skipReasons, summariseReports } from '../../src/skill/edits.ts';
import {
  SLOW_UPDATE_END,
  SLOW_UPDATE_START,
  APPENDIX_START,
  APPENDIX_END,
  injectEmptySlowUpdateField,
  replaceSlowUpdateField,
} from '../../src/skill/regions.ts';

const SKILL = '# Skill\n\n## Rules\n- Answer briefly.\n- Cite sources.\n';

describe('edit ops', () => {
  it('append adds a paragraph at the end', () => {
    const { skill, reports } = applyEdits(SKILL, [{ op: 'append', content: '- Use metric units.' }]);
    assert.equal(skill, '# Skill\n\n## Rules\n- Answer briefly.\n- Cite sources.\n\n- Use metric units.\n');
    assert.equal(reports[0]!.status, 'applied_append');
    assert.equal(reports[0]!.index, 1);
  });

  it('append goes before protected regions, which stay at the end', () => {
    const withField = replaceSlowUpdateField(SKILL, 'Keep answers short.');
    const { skill, reports } = applyEdits(withField, [{ op: 'append', content: 'New rule.' }]);
    assert.equal(reports[0]!.status, 'applied_append_before_protected_region');
    assert.ok(skill.indexOf('New rule.') < skill.indexOf(SLOW_UPDATE_START));
    assert.ok(skill.trimEnd().endsWith(SLOW_UPDATE_END));
  });

  it('insert_after puts the content on a new line after the line holding the target', () => {
    const { skill, reports } = applyEdits(SKILL, [
      { op: 'insert_after', target: 'Answer briefly', content: '- Be polite.' },
    ]);
    assert.equal(skill, '# Skill\n\n## Rules\n- Answer briefly.\n\n- Be polite.\n- Cite sources.\n');
    assert.equal(reports[0]!.status, 'applied_insert_after');
    assert.equal(reports[0]!.match, 'exact');
  });

  it('insert_after with a missing target falls back to append, and says so', () => {
    const { skill, reports } = applyEdits(SKILL, [{ op: 'insert_after', target: 'No such line', content: 'Tail.' }]);
    assert.ok(skill.endsWith('Tail.\n'));
    assert.equal(reports[0]!.status, 'applied_insert_after_fallback_append');
  });

  it('replace changes the first occurrence only', () => {
    const { skill, reports } = applyEdits('a x a x', [{ op: 'replace', target: 'x', content: 'y' }]);
    assert.equal(skill, 'a y a x');
    assert.equal(reports[0]!.status, 'applied_replace');
  });

  it('delete removes the target', () => {
    const { skill, reports } = applyEdits(SKILL, [{ op: 'delete', target: '- Cite sources.\n' }]);
    assert.equal(skill, '# Skill\n\n## Rules\n- Answer briefly.\n');
    assert.equal(reports[0]!.status, 'applied_delete');
  });

  it('a missing or empty target skips replace and delete with the reason', () => {
    const { skill, reports } = applyEdits(SKILL, [
      { op: 'replace', target: 'Not here', content: 'x' },
      { op: 'delete', target: 'Not here either' },
      { op: 'replace', content: 'x' },
      { op: 'delete', target: '   ' },
    ]);
    assert.equal(skill, SKILL);
    assert.deepEqual(
      reports.map((r) => r.status),
      [
        'skipped_replace_target_not_found',
        'skipped_delete_target_not_found',
        'skipped_replace_missing_target',
        'skipped_delete_missing_target',
      ],
    );
    assert.ok(reports.every((r) => r.reason && r.reason.length > 0));
  });

  it('an unknown op and empty content are skipped, not fatal', () => {
    const { skill, reports } = applyEdits(SKILL, [
      { op: 'rewrite', content: 'x' },
      { op: 'append', content: '  ' },
      { op: 'append', content: 'ok' },
    ]);
    assert.deepEqual(
      reports.map((r) => r.status),
      ['skipped_unknown_op', 'skipped_empty_content', 'applied_append'],
    );
    assert.ok(skill.endsWith('ok\n'));
  });

  it('falls back to a whitespace-tolerant match and reports it', () => {
    const { skill, reports } = applyEdits(SKILL, [
      { op: 'replace', target: '-  Answer\n briefly.', content: '- Answer in one sentence.' },
    ]);
    assert.ok(skill.includes('- Answer in one sentence.\n- Cite sources.'));
    assert.equal(reports[0]!.status, 'applied_replace');
    assert.equal(reports[0]!.match, 'whitespace');
  });
});

describe('the whitespace-tolerant fallback does not misfire', () => {
  it('never matches inside a word, and needs two words', () => {
    const skill = 'Updates: see the changelog.\nShowcase the lower case rule.\n';
    const { skill: out, reports } = applyEdits(skill, [
      { op: 'delete', target: '\ndates\n' },
      { op: 'replace', target: ' case\n', content: 'x' },
      { op: 'replace', target: 'lower   case', content: 'upper case' },
    ]);
    assert.deepEqual(
      reports.map((r) => r.status),
      ['skipped_delete_target_not_found', 'skipped_replace_target_not_found', 'applied_replace'],
    );
    assert.equal(out, 'Updates: see the changelog.\nShowcase the upper case rule.\n');
  });

  it('append ignores a target, even one that earlier edits touched', () => {
    const { reports } = applyEdits('A rule.\n', [
      { op: 'replace', target: 'A rule.', content: 'A better rule.' },
      { op: 'append', target: 'A better rule.', content: 'More.' },
    ]);
    assert.deepEqual(
      reports.map((r) => r.status),
      ['applied_replace', 'applied_append'],
    );
  });

  it('an insertion point inside an earlier multi-line replacement is an overlap', () => {
    const { skill, reports } = applyEdits('A B\nX\n', [
      { op: 'replace', target: 'B', content: 'B1\nB2' },
      { op: 'insert_after', target: 'A B1', content: 'NEW' },
    ]);
    assert.deepEqual(
      reports.map((r) => r.status),
      ['applied_replace', 'skipped_overlapping_edit'],
    );
    assert.equal(skill, 'A B1\nB2\nX\n');
  });
});

describe('protected regions', () => {
  const protectedSkill = replaceSlowUpdateField(SKILL, 'Guidance: keep answers short.');

  it('edits cannot target text inside a protected region', () => {
    const { skill, reports } = applyEdits(protectedSkill, [
      { op: 'replace', target: 'Guidance: keep answers short.', content: 'hacked' },
      { op: 'delete', target: SLOW_UPDATE_START },
      { op: 'insert_after', target: 'keep answers short', content: 'x' },
    ]);
    assert.equal(skill, protectedSkill);
    assert.deepEqual(
      reports.map((r) => r.status),
      ['skipped_protected_region', 'skipped_protected_region', 'skipped_protected_region'],
    );
  });

  it('a target that also appears outside the region is edited there', () => {
    const s = replaceSlowUpdateField('Cite sources.\n', 'Cite sources.');
    const { skill, reports } = applyEdits(s, [
      { op: 'replace', target: 'Cite sources.', content: 'Cite two sources.' },
    ]);
    assert.equal(reports[0]!.status, 'applied_replace');
    assert.ok(skill.startsWith('Cite two sources.'));
    assert.ok(skill.includes(`${SLOW_UPDATE_START}\nCite sources.\n${SLOW_UPDATE_END}`));
  });

  it('markers are removed from edit content, so an edit cannot open a region', () => {
    const { skill } = applyEdits(SKILL, [{ op: 'append', content: `${APPENDIX_START}\nnote\n${APPENDIX_END}` }]);
    assert.ok(!skill.includes(APPENDIX_START));
    assert.ok(skill.includes('note'));
  });

  it('the appendix and the slow-update field are both protected, appends land before both', () => {
    const s = `${injectEmptySlowUpdateField(SKILL)}\n${APPENDIX_START}\n## Execution Notes Appendix\n- re-check dates\n${APPENDIX_END}\n`;
    const { skill, reports } = applyEdits(s, [
      { op: 'delete', target: 're-check dates' },
      { op: 'append', content: 'Body rule.' },
    ]);
    assert.deepEqual(
      reports.map((r) => r.status),
      ['skipped_protected_region', 'applied_append_before_protected_region'],
    );
    assert.ok(skill.indexOf('Body rule.') < skill.indexOf(SLOW_UPDATE_START));
    assert.ok(skill.indexOf('Body rule.') < skill.indexOf(APPENDIX_START));
  });
});

describe('patches', () => {
  it('applies edits in order, each to the previous result', () => {
    const { skill, reports } = applyEdits(SKILL, [
      { op: 'replace', target: 'Answer briefly.', content: 'Answer in one line.' },
      { op: 'insert_after', target: 'Cite sources.', content: '- Prefer primary sources.' },
    ]);
    assert.ok(skill.includes('- Answer in one line.\n- Cite sources.\n\n- Prefer primary sources.'));
    assert.deepEqual(summariseReports(reports), { total: 2, applied: 2, skipped: 0, errors: 0 });
  });

  it('skips an edit whose target overlaps text an earlier edit changed', () => {
    const { skill, reports } = applyEdits(SKILL, [
      { op: 'replace', target: 'Answer briefly.', content: 'Answer in one line.' },
      { op: 'replace', target: 'in one line', content: 'in two lines' },
      { op: 'delete', target: '- Answer in' },
      { op: 'replace', target: 'Cite sources.', content: 'Cite one source.' },
    ]);
    assert.deepEqual(
      reports.map((r) => r.status),
      ['applied_replace', 'skipped_overlapping_edit', 'skipped_overlapping_edit', 'applied_replace'],
    );
    assert.equal(skill, '# Skill\n\n## Rules\n- Answer in one line.\n- Cite one source.\n');
  });

  it('a deletion point counts as changed text for later edits spanning it', () => {
    const { reports } = applyEdits('alpha beta gamma', [
      { op: 'delete', target: 'beta ' },
      { op: 'replace', target: 'alpha gamma', content: 'x' },
      { op: 'replace', target: 'gamma', content: 'g' },
    ]);
    assert.deepEqual(
      reports.map((r) => r.status),
      ['applied_delete', 'skipped_overlapping_edit', 'applied_replace'],
    );
  });

  it('skips edits that would take the skill over the token limit, keeps the rest', () => {
    const limit = countTokens(SKILL) + 12;
    const long = 'This sentence is long enough to push the skill well over its small token budget, by design.';
    const { skill, reports } = applyEdits(
      SKILL,
      [
        { op: 'append', content: long },
        { op: 'append', content: 'Short.' },
        { op: 'delete', target: '- Cite sources.\n' },
      ],
      { maxTokens: limit },
    );
    assert.deepEqual(
      reports.map((r) => r.status),
      ['skipped_length_limit', 'applied_append', 'applied_delete'],
    );
    assert.match(reports[0]!.reason!, /over the limit/);
    assert.ok(countTokens(skill) <= limit);
    assert.ok(!skill.includes(long));
  });

  it('the report truncates long targets and contents to 200 characters', () => {
    const big = 'x'.repeat(500);
    const { reports } = applyEdits(SKILL, [{ op: 'replace', target: big, content: big }]);
    assert.equal(reports[0]!.target.length, 200);
    assert.equal(reports[0]!.content_preview.length, 200);
  });
});

describe('skipped edits in words', () => {
  it('names each reason with how many edits it skipped, in the order they came', () => {
    const { reports } = applyEdits(SKILL, [
      { op: 'replace', target: 'not in the skill', content: 'x' },
      { op: 'rename', target: 'Answer briefly.', content: 'x' } as never,
      { op: 'delete', target: 'also not there', content: '' },
      { op: 'replace', target: 'Answer briefly.', content: 'Answer in one line.' },
    ]);
    assert.equal(skipReasons(reports), '2 target not found, 1 unknown op');
    assert.equal(skipReasons(reports.filter((r) => r.status.startsWith('applied'))), '');
  });
});
