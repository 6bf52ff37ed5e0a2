import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { resolveConfigPath } from '../../src/util/paths.ts';
import { extractAnswer, ExtractSchema } from '../../src/envs/scoring/extract.ts';
import { goldList } from '../../src/envs/scoring/golds.ts';
import {
  anls,
  contains,
  exactMatch,
  f1Pair,
  normalizeLabel,
  numericMatch,
  parseNumber,
  pickLabel,
  tokenF1,
} from '../../src/envs/scoring/metrics.ts';
import { basicNormalize, officeqaNormalize, squadNormalize } from '../../src/envs/scoring/normalize.ts';
import { buildScorer, ScorerSchema } from '../../src/envs/scoring/scorer.ts';
import type { ScoreInput } from '../../src/envs/scoring/types.ts';
import { InfraError } from '../../src/model/types.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { ScriptedModel } from './scripted.ts';

const input = (prediction: string, expected: unknown, item: Record<string, unknown> = {}): ScoreInput => ({
  prediction,
  golds: goldList(expected),
  expected,
  item: { id: 'x', ...item },
  task: 'the task',
  reply: prediction,
});
const score = async (config: unknown, prediction: string, expected: unknown, item?: Record<string, unknown>) =>
  (await buildScorer(ScorerSchema.parse(config), { resolvePath: (_key: string, value: string) => value }))(
    input(prediction, expected, item),
    {},
  );

describe('normalisation', () => {
  it('SQuAD: case, punctuation, articles, whitespace', () => {
    assert.equal(squadNormalize('  The  Eiffel-Tower, Paris! '), 'eiffeltower paris');
    assert.equal(squadNormalize('An apple a day'), 'apple day');
    assert.equal(squadNormalize('theory'), 'theory', 'an article inside a word stays');
  });
  it('basic keeps punctuation', () => {
    assert.equal(basicNormalize(' New\tYork,  NY '), 'new york, ny');
  });
  it('OfficeQA drops commas, scale words and most punctuation, keeps . - %', () => {
    assert.equal(officeqaNormalize('$1,234.5 Million dollars'), '1234.5');
    assert.equal(officeqaNormalize('-3.2%'), '-3.2%');
    assert.equal(officeqaNormalize('(nominal) 12 billion'), '12');
  });
});

describe('extraction', () => {
  const rule = (r: Record<string, unknown>) => ExtractSchema.parse(r);
  it('takes the last answer tag, case-insensitive, across lines', () => {
    assert.deepEqual(extractAnswer('<answer>draft</answer> then <ANSWER>\n final \n</ANSWER>', rule({})), {
      answer: 'final',
      found: true,
    });
    assert.deepEqual(extractAnswer('<answer>one</answer><answer>two</answer>', rule({ which: 'first' })), {
      answer: 'one',
      found: true,
    });
  });
  it('falls back to the last non-empty line and says so', () => {
    assert.deepEqual(extractAnswer('thinking...\nParis\n\n', rule({})), { answer: 'Paris', found: false });
    assert.deepEqual(extractAnswer('no tag', rule({ fallback: 'empty' })), { answer: '', found: false });
    assert.deepEqual(extractAnswer('', rule({})), { answer: '', found: false });
  });
  it('regex: first group of the last match', () => {
    assert.equal(
      extractAnswer('Answer: 3\nAnswer: 4', rule({ mode: 'regex', pattern: 'answer:\\s*(\\S+)' })).answer,
      '4',
    );
  });
  it('JSON field, nested', () => {
    assert.equal(
      extractAnswer('here: {"result": {"value": 12}}', rule({ mode: 'json_field', field: 'result.value' })).answer,
      '12',
    );
    assert.equal(extractAnswer('nothing', rule({ mode: 'json_field', fallback: 'empty' })).found, false);
  });
  it('an unusual tag name', () => {
    assert.equal(extractAnswer('<final>x</final>', rule({ tag: 'final' })).answer, 'x');
  });
});

describe('golds', () => {
  it('accept strings, lists, JSON list strings, numbers and answer objects', () => {
    assert.deepEqual(goldList('Paris'), ['Paris']);
    assert.deepEqual(goldList(['a', 'b']), ['a', 'b']);
    assert.deepEqual(goldList('["a", "b"]'), ['a', 'b']);
    assert.deepEqual(goldList('[not json'), ['[not json']);
    assert.deepEqual(goldList(42), ['42']);
    assert.deepEqual(goldList({ answers: ['x'] }), ['x']);
    assert.deepEqual(goldList([{ text: 'y' }]), ['y']);
    assert.deepEqual(goldList(null), []);
  });
});

describe('metrics', () => {
  it('EM with several golds and normalisation', () => {
    assert.equal(exactMatch('the Beatles', ['Beatles', 'Fab Four'], squadNormalize), 1);
    assert.equal(exactMatch('Beatle', ['Beatles'], squadNormalize), 0);
    assert.equal(exactMatch('', ['x'], squadNormalize), 0);
    assert.equal(exactMatch('', [''], squadNormalize), 1);
  });
  it('token F1: partial overlap, repeated tokens, empty sides', () => {
    assert.equal(f1Pair('a b', 'a b'), 1);
    assert.ok(Math.abs(f1Pair('new york city', 'new york') - 0.8) < 1e-9);
    assert.ok(Math.abs(f1Pair('a a a', 'a') - 0.5) < 1e-9, 'a token counts as often as the gold has it');
    assert.equal(f1Pair('', ''), 1);
    assert.equal(f1Pair('', 'x'), 0);
    assert.equal(f1Pair('x', ''), 0);
    assert.equal(tokenF1('george washington', ['Washington', 'George W.'], squadNormalize), 2 / 3);
  });
  it('contains: gold inside prediction; an empty gold only matches an empty answer', () => {
    assert.equal(contains('It was Marie Curie, in 1903', ['marie curie'], basicNormalize), 1);
    assert.equal(contains('Curie', ['Marie Curie'], basicNormalize), 0);
    assert.equal(contains('anything', [''], basicNormalize), 0);
  });
  it('ANLS: threshold, both empty, case and spaces', () => {
    assert.equal(anls('  HELLO  world ', ['hello world']), 1);
    assert.ok(Math.abs(anls('helo', ['hello']) - 0.8) < 1e-9);
    assert.equal(anls('abc', ['xyz']), 0, 'distance 1.0 is past the threshold');
    assert.equal(anls('ab', ['abcd']), 0, 'NL = 0.5 is not below τ = 0.5');
    assert.ok(anls('abc', ['abcd']) > 0.7);
    assert.equal(anls('', ['']), 1);
    assert.equal(anls('', ['x']), 0);
    assert.equal(anls('1O', ['10', '1O']), 1, 'best gold');
    assert.equal(anls('ab', ['abcd'], 0.6), 0.5, 'a looser τ counts it');
  });
  it('numbers: separators, signs, currency, percent, exponents, scale words, units', () => {
    assert.equal(parseNumber('$1,234.50'), 1234.5);
    assert.equal(parseNumber('−7'), -7);
    assert.equal(parseNumber('about 45%'), 45);
    assert.equal(parseNumber('3.5 million'), 3_500_000);
    assert.equal(parseNumber('3.5 million', false), 3.5);
    assert.equal(parseNumber('12 kg'), 12);
    assert.equal(parseNumber('1.2e3'), 1200);
    assert.equal(parseNumber('in 2019 it was 5.2 billion'), 5.2e9, 'the last number');
    assert.equal(parseNumber('2019-2020'), 2020, 'a hyphen between numbers is not a minus');
    assert.equal(parseNumber('none'), undefined);
    assert.equal(parseNumber('.5'), 0.5);
  });
  it('numeric match with tolerances', () => {
    const o = { absTol: 0, relTol: 1e-6, scaleWords: true };
    assert.equal(numericMatch('1,500,000', ['1.5 million'], o), 1);
    assert.equal(numericMatch('3.14', ['3.14159'], o), 0);
    assert.equal(numericMatch('3.14', ['3.14159'], { ...o, absTol: 0.01 }), 1);
    assert.equal(numericMatch('101', ['100'], { ...o, relTol: 0.02 }), 1);
    assert.equal(numericMatch('no idea', ['0'], o), 0);
    assert.equal(numericMatch('-5', ['5'], { ...o, absTol: 1 }), 0);
  });
  it('labels: normalisation and how an answer picks a choice', () => {
    assert.equal(normalizeLabel(' b) '), 'B');
    assert.equal(normalizeLabel('(C)'), 'C');
    const choices = [
      { label: 'A', text: 'It converges' },
      { label: 'B', text: 'It diverges' },
    ];
    assert.equal(pickLabel('b.', choices), 'B');
    assert.equal(pickLabel('it DIVERGES', choices), 'B', 'by choice text');
    assert.equal(pickLabel('A because of the bound', choices), 'A', 'first token');
    assert.equal(pickLabel('E', choices), 'E', 'not a valid label: kept, matches nothing');
  });
});

describe('scorers', () => {
  it('exact_match: hard EM, soft F1; normalisation is a choice', async () => {
    assert.deepEqual(await score({ type: 'exact_match', normalize: 'squad' }, 'The Beatles.', ['Beatles']), {
      hard: 1,
      soft: 1,
      metric: 'EM',
    });
    const partial = await score({ type: 'exact_match', normalize: 'squad' }, 'the beatles band', 'Beatles');
    assert.equal(partial.hard, 0);
    assert.ok(partial.soft > 0.6 && partial.soft < 0.7);
    assert.equal((await score({ type: 'exact_match', normalize: 'none' }, 'Paris', 'paris')).hard, 0);
    assert.equal((await score({ type: 'exact_match' }, 'Paris', 'paris')).hard, 1, 'basic normalisation ignores case');
  });
  it('token_f1 passes at a threshold', async () => {
    assert.equal((await score({ type: 'token_f1', pass_at: 0.5 }, 'new york city', 'new york')).hard, 1);
    assert.equal((await score({ type: 'token_f1' }, 'new york city', 'new york')).hard, 0);
  });
  it('regex: per-item patterns or one pattern', async () => {
    assert.equal((await score({ type: 'regex' }, 'Order #A-123', '^order #[a-z]-\\d+$')).hard, 1);
    assert.equal(
      (await score({ type: 'regex', pattern: '^\\d{4}-\\d{2}-\\d{2}$', flags: '' }, '2024-01-31', 'unused')).hard,
      1,
    );
    assert.equal((await score({ type: 'regex', pattern: '^\\d{4}$' }, '24', 'unused')).hard, 0);
  });
  it('choice reads the item choices in any common shape', async () => {
    const r = await score({ type: 'choice' }, 'It diverges', 'B', { choices: ['It converges', 'It diverges'] });
    assert.equal(r.hard, 1);
    assert.equal(r.details?.predicted_label, 'B');
    assert.equal((await score({ type: 'choice' }, 'A', 'b', { choices: { A: 'x', B: 'y' } })).hard, 0);
  });
  it('anls: hard only near-exact', async () => {
    const near = await score({ type: 'anls' }, 'helo', 'hello');
    assert.equal(near.hard, 0);
    assert.ok(Math.abs(near.soft - 0.8) < 1e-9);
    assert.equal((await score({ type: 'anls' }, 'HELLO', 'hello')).hard, 1);
  });
  it('json_field: all fields, or the listed ones; soft = share right', async () => {
    const exp = { city: 'Paris', country: 'France', year: 1889 };
    const all = await score({ type: 'json_field' }, '{"city": "paris", "country": "Italy", "year": "1889"}', exp);
    assert.equal(all.hard, 0);
    assert.ok(Math.abs(all.soft - 2 / 3) < 1e-9);
    assert.match(all.feedback!, /country/);
    assert.equal(
      (
        await score(
          { type: 'json_field', fields: ['city', 'year'] },
          '{"city": "Paris", "year": 1889}',
          JSON.stringify(exp),
        )
      ).hard,
      1,
    );
    assert.equal((await score({ type: 'json_field' }, 'no json', exp)).soft, 0);
  });
  it('numeric scorer with units', async () => {
    assert.equal((await score({ type: 'numeric', rel_tol: 0.001 }, 'about $2.5 billion', '2,500,000,000')).hard, 1);
    assert.equal((await score({ type: 'numeric', scale_words: false }, '2.5 billion', '2500000000')).hard, 0);
  });
  it('unknown scorer types are rejected with the list', () => {
    const TYPES = [
      'exact_match',
      'token_f1',
      'contains',
      'regex',
      'numeric',
      'choice',
      'anls',
      'json_field',
      'judge',
      'custom',
    ];
    const r = ScorerSchema.safeParse({ type: 'exact' });
    assert.deepEqual(
      r.error?.issues.map((i) => [i.path.join('.'), (i as { options?: unknown }).options]),
      [['type', TYPES]],
    );
    const dir = tmpDir();
    writeFiles(dir, {
      'c.yaml': 'model:\n  backend: sim\nenv:\n  name: tasks\n  data_path: d.jsonl\n  scorer:\n    type: exact\n',
    });
    assert.throws(
      () => loadConfig(path.join(dir, 'c.yaml'), { environment: {} }),
      (err: Error) => {
        assert.match(err.message, /c\.yaml: env\.scorer\.type: .*got string "exact"$/);
        for (const t of TYPES) assert.ok(err.message.includes(`"${t}"`), `the message lists ${t}`);
        return true;
      },
    );
  });
});

describe('judge scorer', () => {
  it('asks the judge with purpose judge and reads its verdict', async () => {
    const judge = new ScriptedModel(
      'fake:judge',
      () => '{"verdict": "Correct", "score": 0.9, "reason": "same meaning"}',
    );
    const scorer = await buildScorer(ScorerSchema.parse({ type: 'judge', rubric: 'Must name the city.' }), {
      resolvePath: (_key: string, value: string) => value,
    });
    const s = await scorer(input('The capital is Paris', 'Paris'), { judge });
    assert.deepEqual([s.hard, s.soft], [1, 0.9]);
    assert.equal(judge.requests[0]!.purpose, 'judge');
    const sent = JSON.stringify(judge.requests[0]!.messages);
    assert.match(sent, /Must name the city/);
    assert.match(sent, /The capital is Paris/);
  });
  it('an unusable judge reply is an infrastructure failure, not a wrong answer', async () => {
    const judge = new ScriptedModel('fake:judge', () => 'I think it is fine');
    const scorer = await buildScorer(ScorerSchema.parse({ type: 'judge' }), {
      resolvePath: (_key: string, value: string) => value,
    });
    await assert.rejects(scorer(input('x', 'y'), { judge }), InfraError);
    assert.equal(judge.requests.length, 2, 'one corrective retry');
  });
});

describe('custom scorer', () => {
  it('loads a TS module and checks what it returns', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'len.ts':
        'export default (p: string, item: { id: string; expected: string }) => ({ hard: p.length === item.expected.length ? 1 : 0, soft: 0.5, feedback: `len ${p.length}` });',
      'named.mjs': 'export async function grade(p) { return { hard: p === "ok" ? 1 : 0 }; }',
      'bad.mjs': 'export default () => ({ hard: 2 });',
    });
    const s = await (
      await buildScorer(ScorerSchema.parse({ type: 'custom', module: path.join(dir, 'len.ts') }), {
        resolvePath: (_key: string, value: string) => resolveConfigPath(value, dir),
      })
    )(input('abc', 'xyz', { expected: 'xyz' }), {});
    assert.deepEqual(s, { hard: 1, soft: 0.5, metric: 'SCORE', feedback: 'len 3' });
    const named = await buildScorer(ScorerSchema.parse({ type: 'custom', module: 'named.mjs', export: 'grade' }), {
      resolvePath: (_key: string, value: string) => resolveConfigPath(value, dir),
    });
    assert.deepEqual(await named(input('ok', 'ok'), {}), { hard: 1, soft: 1, metric: 'SCORE' });
    const bad = await buildScorer(ScorerSchema.parse({ type: 'custom', module: path.join(dir, 'bad.mjs') }), {
      resolvePath: (_key: string, value: string) => resolveConfigPath(value, dir),
    });
    await assert.rejects(bad(input('x', 'y'), {}), /returned \{"hard":2\}.*hard/);
    await assert.rejects(
      buildScorer(ScorerSchema.parse({ type: 'custom', module: path.join(dir, 'named.mjs') }), {
        resolvePath: (_key: string, value: string) => resolveConfigPath(value, dir),
      }),
      /no exported function 'default' \(it exports: grade/,
    );
    await assert.rejects(
      buildScorer(ScorerSchema.parse({ type: 'custom', module: path.join(dir, 'nope.ts') }), {
        resolvePath: (_key: string, value: string) => resolveConfigPath(value, dir),
      }),
      /file not found/,
    );
  });
});
