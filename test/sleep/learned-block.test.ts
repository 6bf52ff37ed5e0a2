import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UserError } from '../../src/errors.ts';
import { applyToBlock } from '../../src/sleep/documents/learned-block.ts';
import {
  LEARNED_END,
  LEARNED_HEADING,
  LEARNED_NOTE,
  LEARNED_START,
  rulesOf,
  splitDocument,
  withRules,
} from '../../src/sleep/documents/learned-block.ts';

const HAND = '---\nname: depot\ndescription: Depot records.\n---\n\n# Depot\n\n- Always answer in upper case.\n';

test('a document without a block gets one at its end; the text before it stays byte for byte', () => {
  const doc = withRules(HAND, '- Write every date as YYYY-MM-DD.');
  assert.ok(doc.startsWith(HAND), 'the hand-written text is untouched');
  assert.equal(
    doc.slice(HAND.length),
    `\n${LEARNED_START}\n${LEARNED_HEADING}\n\n${LEARNED_NOTE}\n\n- Write every date as YYYY-MM-DD.\n${LEARNED_END}\n`,
  );
  assert.equal(rulesOf(doc), '- Write every date as YYYY-MM-DD.');
  assert.equal(withRules('no newline at the end', '- r').startsWith('no newline at the end\n\n<!--'), true);
  assert.equal(withRules(HAND, '   '), HAND, 'no rules, no block');
});

test('a block already in the document is rewritten in place; what is around it stays as it was', () => {
  const before = 'intro\n\n';
  const after = '\n\n## Written after the block\nby hand\n';
  const doc = `${before}${LEARNED_START}\n${LEARNED_HEADING}\n\n- old rule\n${LEARNED_END}${after}`;
  const parts = splitDocument(doc);
  assert.deepEqual([parts.before, parts.rules, parts.after, parts.hasBlock], [before, '- old rule', after, true]);
  const next = withRules(doc, '- new rule');
  assert.ok(next.startsWith(before) && next.endsWith(after));
  assert.equal(rulesOf(next), '- new rule');
});

test('a block that does not close, or two blocks, refuse the document (no text is ever cut); markers written into a rule are taken out', () => {
  assert.throws(
    () => splitDocument(`a\n${LEARNED_START}\n- r\n`, 'SKILL.md'),
    (e: unknown) =>
      e instanceof UserError && /SKILL\.md: the learned block opens .* but does not close/.test((e as Error).message),
  );
  assert.throws(
    () => splitDocument(`${LEARNED_START}${LEARNED_END}${LEARNED_START}${LEARNED_END}`),
    /more than one learned block/,
  );
  const doc = withRules('x\n', `- a ${LEARNED_END} b ${LEARNED_START}`);
  assert.equal(rulesOf(doc), '- a  b');
});

test('edits apply to the learned rules only: an edit aimed at the hand-written text is refused as protected, appends land in the block', () => {
  const doc = withRules(HAND, '- Write every date as YYYY-MM-DD.');
  const { text, reports } = applyToBlock(
    doc,
    [
      { op: 'delete', target: '- Always answer in upper case.' },
      { op: 'append', content: '- Give percentages with the % sign.' },
      { op: 'replace', target: 'Write every date as YYYY-MM-DD.', content: 'Dates are YYYY-MM-DD (2024-03-05).' },
      { op: 'replace', target: 'a rule that is nowhere', content: 'x' },
    ],
    'SKILL.md',
  );
  assert.deepEqual(
    reports.map((r) => r.status),
    ['skipped_protected_region', 'applied_append', 'applied_replace', 'skipped_replace_target_not_found'],
  );
  assert.match(reports[0]!.reason!, /outside the learned block/);
  assert.ok(text.startsWith(HAND));
  assert.equal(rulesOf(text), '- Dates are YYYY-MM-DD (2024-03-05).\n- Give percentages with the % sign.');
});
