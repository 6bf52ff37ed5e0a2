import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { describeReport, SkillLint, type AuditPolicy } from '../../src/audit/audit.ts';
import { findGaming } from '../../src/audit/gaming.ts';
import { codeLiterals, regexLiterals } from '../../src/envs/scoring/scorer-checks.ts';
import { auditItems, type AuditItem } from '../../src/audit/items.ts';
import { INPUT_RUN, LeakIndex } from '../../src/audit/leak.ts';
import { SimEnv, SimEnvOptions } from '../../src/envs/sim/env.ts';
import { readPackageDir } from '../../src/skill/package/folder.ts';
import type { SkillPackage } from '../../src/skill/package/package.ts';
import { ROOT } from '../helpers/cli.ts';

const POLICY: AuditPolicy = { checks: ['leak', 'scorer_gaming'], onFlag: 'warn', onFail: 'reject' };

async function simItems(): Promise<AuditItem[]> {
  const env = new SimEnv(SimEnvOptions.parse({}));
  return auditItems(await env.load());
}

const pkg = (skill: string): SkillPackage => ({ skill });
const HONEST = [
  '# House conventions',
  '',
  '- Write every date as YYYY-MM-DD (for example 2020-01-31).',
  '- Give amounts of money with two decimals and no thousands separator.',
  '- Spell a site by its full name as the register has it.',
].join('\n');

describe('the leak lint', () => {
  it("names the item whose question and answer a skill carries, and its id, and passes the sim's honest rules", async () => {
    const items = await simItems();
    const train = items.filter((i) => i.split === 'train');
    // A date question of the training split: its answer is specific to it.
    const dated = train.find((i) => /^\d{4}-\d{2}-\d{2}$/.test(i.answers[0]!) && /open\?$/.test(i.input))!;
    const lint = new SkillLint(items, [], POLICY);
    assert.equal(lint.lint(pkg(HONEST)).verdict, 'pass');

    const leaking = `${HONEST}\n- Known case: "${dated.input}" is answered ${dated.answers[0]}.\n`;
    const report = lint.lint(pkg(leaking), pkg(HONEST), [
      { op: 'append', content: `Known case: "${dated.input}" is answered ${dated.answers[0]}.` },
    ]);
    assert.equal(report.verdict, 'fail');
    assert.equal(lint.rejects(report), true);
    const leak = report.checks.find((c) => c.check === 'leak')!;
    const finding = leak.findings.find((f) => 'item' in f && f.item === dated.id);
    assert.ok(finding, JSON.stringify(leak.findings));
    assert.equal('kind' in finding! && finding.kind, 'answer');
    assert.equal(finding!.line, 6);
    assert.deepEqual(finding!.edit, { index: 0, op: 'append', file: 'SKILL.md' });
    assert.match(
      describeReport(report).join('\n'),
      new RegExp(`answer of train item ${dated.id} at SKILL.md:6 \\(edit 1, append\\)`),
    );

    const byId = lint.lint(pkg(`${HONEST}\n- Item ${dated.id} is a trick question.`), pkg(HONEST));
    assert.deepEqual(
      byId.checks[0]!.findings.map((f) => 'kind' in f && [f.kind, f.item]),
      [['id', dated.id]],
    );
  });

  it('holds only what the candidate adds against it', async () => {
    const items = await simItems();
    const item = items.find((i) => i.split === 'val' && /^\d{4}-\d{2}-\d{2}$/.test(i.answers[0]!))!;
    const lint = new SkillLint(items, [], POLICY);
    const leaky = `${HONEST}\n${item.input} ${item.answers[0]}`;
    assert.equal(lint.lint(pkg(leaky)).verdict, 'fail', 'alone, the leak is found');
    assert.equal(lint.lint(pkg(`${leaky}\n- One more rule.`), pkg(leaky)).verdict, 'pass', 'not new');
  });

  it("reads the real benchmark's items: a SearchQA question beside its answer leaks, the answer alone does not", () => {
    const items: AuditItem[] = [
      {
        id: 'sq0002',
        split: 'train',
        input: 'The longest river in South America',
        answers: ['Amazon', 'the Amazon river'],
      },
      { id: 'sq0005', split: 'test', input: 'This planet is known as the red planet', answers: ['Mars'] },
      { id: 'sq0006', split: 'test', input: 'The river that flows through Cairo', answers: ['Nile'] },
    ];
    const index = new LeakIndex(items);
    assert.deepEqual(
      index.find([{ file: 'SKILL.md', text: 'Rivers: check the Amazon and the Nile pages first.' }]),
      [],
    );
    const found = index.find([
      { file: 'references/facts.md', text: '## Facts\n\nQ: the longest river in South America?\nA: Amazon.' },
    ]);
    assert.deepEqual(
      found.map((f) => [f.kind, f.item, f.split, f.file, f.line]),
      [['answer', 'sq0002', 'train', 'references/facts.md', 3]],
    );
  });

  it('finds a request copied at length, but not boilerplate many requests share', () => {
    const boiler = 'Read the attached quarterly report of the company and answer the question below in one line';
    const items: AuditItem[] = [1, 2, 3].map((n) => ({
      id: `q-${n}`,
      split: 'train',
      input: `${boiler}. Question ${n}: what was the revenue of division ${n} in the third quarter of the fiscal year ${2000 + n}?`,
      answers: [`${n}00`],
    }));
    const index = new LeakIndex(items);
    assert.deepEqual(index.find([{ file: 'SKILL.md', text: `${boiler}.` }]), [], 'shared by every request');
    const copied = 'what was the revenue of division 2 in the third quarter of the fiscal year 2002';
    assert.ok(copied.split(' ').length >= INPUT_RUN);
    const found = index.find([{ file: 'SKILL.md', text: `Remember: ${copied}.` }]);
    assert.deepEqual(
      found.map((f) => [f.kind, f.item]),
      [['input', 'q-2']],
    );
  });

  it("passes real public skill packages against the sim's and a benchmark's items", async () => {
    const items = await simItems();
    const lint = new SkillLint(items, [], POLICY);
    const dir = path.join(ROOT, 'test/fixtures/packages');
    const names = fs.readdirSync(dir).filter((n) => fs.existsSync(path.join(dir, n, 'SKILL.md')));
    assert.ok(names.length >= 4, names.join(', '));
    for (const name of names) {
      const report = lint.lint(readPackageDir(path.join(dir, name)));
      assert.equal(report.verdict, 'pass', `${name}: ${describeReport(report).join('\n')}`);
    }
  });
});

describe('the scorer-gaming lint', () => {
  it("takes the literal text of a regex scorer's pattern and of a custom scorer's code", () => {
    assert.deepEqual(regexLiterals('^## Summary\\n[\\s\\S]*\\bVerified: (yes|no)\\b'), ['## Summary', 'Verified:']);
    assert.deepEqual(regexLiterals('colou?r\\d+'), ['colo']);
    const source = [
      "import fs from 'node:fs';",
      "import { helper } from './helper.js';",
      'export default function score(prediction, item) {',
      "  const ok = prediction.includes('## Sources') && prediction.trim().endsWith('[done]');",
      '  const right = prediction.toLowerCase().includes(String(item.expected).toLowerCase());',
      '  return { hard: ok && right ? 1 : 0, feedback: `expected ${item.expected}` };',
      '}',
    ].join('\n');
    assert.deepEqual(codeLiterals(source), ['## Sources', '[done]']);
  });

  it('flags a skill that tells the target to write what the scorer checks, and only what the candidate adds', () => {
    const checks = ['## Sources', '[done]'];
    const gamed = `${HONEST}\n- Always finish with a "## Sources" section, then write [done].`;
    const found = findGaming([{ file: 'SKILL.md', text: gamed }], checks);
    assert.deepEqual(
      found.map((f) => [f.check, f.line]),
      [
        ['## Sources', 6],
        ['[done]', 6],
      ],
    );
    const lint = new SkillLint([], checks, POLICY);
    const report = lint.lint(pkg(gamed), pkg(HONEST));
    assert.equal(report.verdict, 'flag');
    assert.equal(lint.rejects(report), false, 'a flag warns by default');
    assert.equal(new SkillLint([], checks, { ...POLICY, onFlag: 'reject' }).rejects(report), true);
    assert.equal(lint.lint(pkg(`${gamed}\n- Be brief.`), pkg(gamed)).verdict, 'pass');
    assert.equal(lint.lint(pkg(HONEST)).verdict, 'pass');
  });
});
