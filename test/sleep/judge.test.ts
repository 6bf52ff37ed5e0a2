import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  charBound,
  compilePattern,
  isRefusal,
  isShapeOnly,
  scoreRuleJudge,
  validateChecks,
} from '../../src/sleep/judge/rules.ts';
import { exactScore, keywordSoft } from '../../src/sleep/judge/text-scores.ts';

const judge = (...checks: unknown[]) => ({ kind: 'rule', checks });

test('a rule judge: hard only when every check passes, soft the share that pass, the failures named', () => {
  const j = judge({ op: 'contains', arg: 'YYYY' }, { op: 'max_chars', arg: 10 }, { op: 'not_contains', arg: 'sorry' });
  assert.deepEqual(scoreRuleJudge(j, 'yyyy-mm'), { hard: 1, soft: 1, rationale: 'all checks passed' });
  const two = scoreRuleJudge(j, 'Sorry, YYYY is the format');
  assert.equal(two.hard, 0);
  assert.equal(two.soft, 1 / 3);
  assert.equal(two.rationale, 'failed: max_chars=10, not_contains=sorry');
  assert.deepEqual(scoreRuleJudge(judge(), 'anything'), { hard: 0, soft: 0, rationale: 'no checks' });
});

test('contains and not_contains ignore case; regex matches anywhere, Python inline flags included; a pattern that does not compile fails, saying so', () => {
  assert.equal(scoreRuleJudge(judge({ op: 'contains', arg: 'ISO Date' }), 'use the iso date').hard, 1);
  assert.equal(scoreRuleJudge(judge({ op: 'regex', arg: '\\d{4}-\\d{2}' }), 'on 2019-03 we').hard, 1);
  assert.equal(scoreRuleJudge(judge({ op: 'regex', arg: 'ABC' }), 'abc').hard, 0, 'regex is case-sensitive');
  assert.equal(scoreRuleJudge(judge({ op: 'regex', arg: '(?i)abc' }), 'xABCx').hard, 1);
  assert.equal(compilePattern('(?im)^x').flags.includes('m'), true);
  const bad = scoreRuleJudge(judge({ op: 'regex', arg: '([' }), '([');
  assert.equal(bad.hard, 0);
  assert.match(bad.rationale, /^failed: regex=\(\[ \[invalid regex \(/);
});

test('section_present is strict (a heading ending with the name, a bold line, "Name:"); section_contains any ATX heading holding it', () => {
  const sp = (text: string) => scoreRuleJudge(judge({ op: 'section_present', arg: 'Summary' }), text).hard;
  assert.equal(sp('# Intro\n## Executive summary\ntext'), 1);
  assert.equal(sp('**Summary:**\ntext'), 1);
  assert.equal(sp('Summary: all good'), 1);
  assert.equal(sp('## Summary of changes'), 0, 'the heading must end with the name');
  assert.equal(sp('    ## Summary'), 0, 'four spaces make code, not a heading');
  const sc = (text: string) => scoreRuleJudge(judge({ op: 'section_contains', arg: 'Summary' }), text).hard;
  assert.equal(sc('## Summary of changes'), 1);
  assert.equal(sc('   ### SUMMARY'), 1);
  assert.equal(sc('#Summary'), 0, 'an ATX heading needs a space after the #');
  assert.equal(sc('Summary\n======='), 0);
});

test('max_chars and min_chars count characters (code points); no_refusal; tool_called by the trace or the TOOL_CALL marker; an unknown op passes', () => {
  assert.equal(scoreRuleJudge(judge({ op: 'max_chars', arg: 3 }), '😀😀😀').hard, 1);
  assert.equal(scoreRuleJudge(judge({ op: 'min_chars', arg: '4' }), 'abc').hard, 0);
  assert.equal(scoreRuleJudge(judge({ op: 'no_refusal', arg: null }), "I can't help with that.").hard, 0);
  assert.equal(scoreRuleJudge(judge({ op: 'no_refusal', arg: null }), 'Here is the date: 2019-03-05.').hard, 1);
  assert.equal(scoreRuleJudge(judge({ op: 'tool_called', arg: 'Bash' }), 'done', ['bash']).hard, 1);
  assert.equal(scoreRuleJudge(judge({ op: 'tool_called', arg: 'grep' }), 'TOOL_CALL: grep\nfound').hard, 1);
  assert.equal(scoreRuleJudge(judge({ op: 'tool_called', arg: 'grep' }), 'I would grep').hard, 0);
  assert.equal(scoreRuleJudge(judge({ op: 'sparkle', arg: 'x' }), '').hard, 1);
});

test('refusals: empty, or a refusal opening after Markdown markers and little else; a long answer that starts politely is not one', () => {
  assert.equal(isRefusal(''), true);
  assert.equal(isRefusal('> **I cannot** do that'), true);
  assert.equal(isRefusal('1. I’m unable to complete this.'), true);
  assert.equal(isRefusal(`I cannot stress enough how useful this is. ${'x'.repeat(700)}`), false);
  assert.equal(isRefusal('The answer is 4.'), false);
});

test('validateChecks: errors refuse (not a list, not an object, a missing text, a pattern that does not compile, a bad bound); warnings doubt', () => {
  assert.deepEqual(validateChecks('x').errors, ['the judge is not an object']);
  assert.deepEqual(validateChecks({ checks: 'x' }).errors, ['judge.checks is not a list']);
  const v = validateChecks(
    judge(
      'x',
      { op: 3 },
      { op: 'contains', arg: '  ' },
      { op: 'regex', arg: '(' },
      { op: 'max_chars', arg: 2.5 },
      { op: 'min_chars', arg: -1 },
      { op: 'min_chars', arg: 0 },
      { op: 'sparkle' },
    ),
  );
  assert.deepEqual(v.errors, [
    'check 1 is not an object',
    'check 2: op is not a string',
    'check 3 (contains): needs a non-blank text argument',
    v.errors[3]!,
    'check 5 (max_chars): needs a whole number of characters, got 2.5',
    'check 6 (min_chars): the bound is negative',
  ]);
  assert.match(v.errors[3]!, /^check 4 \(regex\): the pattern does not compile/);
  assert.deepEqual(v.warnings, ['check 7: min_chars=0 always passes', "check 8: unknown op 'sparkle' always passes"]);
  assert.match(
    validateChecks(judge({ op: 'max_chars', arg: 100 }, { op: 'section_present', arg: 'A' })).warnings[0]!,
    /shape of the answer/,
  );
  assert.deepEqual(validateChecks(judge({ op: 'contains', arg: 'x' }, { op: 'no_refusal', arg: null })), {
    errors: [],
    warnings: [],
  });
});

test('shape-only judges and character bounds', () => {
  assert.equal(isShapeOnly(judge({ op: 'max_chars', arg: 1 }, { op: 'section_contains', arg: 'x' })), true);
  assert.equal(isShapeOnly(judge({ op: 'max_chars', arg: 1 }, { op: 'contains', arg: 'x' })), false);
  assert.equal(isShapeOnly(judge()), false);
  assert.equal(isShapeOnly(null), false);
  assert.deepEqual(
    [
      charBound(5),
      charBound(5.0),
      charBound(' 12 '),
      charBound(5.5),
      charBound(true),
      charBound(Number.NaN),
      charBound(Infinity),
      charBound('1e3'),
    ],
    [5, 5, 12, undefined, undefined, undefined, undefined, undefined],
  );
});

test('exact: the reference as words in the answer (not inside a longer number); keyword soft: the share of its words present', () => {
  assert.equal(exactScore('2019-03-05', 'It opened on 2019-03-05.'), 1);
  assert.equal(exactScore('12345.6 USD', 'cost 12345.60 USD'), 0, 'a shorter number inside a longer one is no match');
  assert.equal(exactScore('', 'x'), 0);
  assert.equal(
    keywordSoft('the depot opened in spring', 'The depot opened.'),
    3 / 4,
    'the, depot, opened of the, depot, opened, spring (in is too short)',
  );
});
