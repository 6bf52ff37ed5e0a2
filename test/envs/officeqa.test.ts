import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { materialize } from '../../src/envs/materialize.ts';
import { Corpus, resolveDocsRoots } from '../../src/envs/officeqa/corpus.ts';
import { officeqaScore } from '../../src/envs/officeqa/env.ts';
import { htmlToMarkdown, oraclePages } from '../../src/envs/officeqa/oracle.ts';
import { DocTools } from '../../src/envs/officeqa/tools.ts';
import { createEnv } from '../../src/envs/build.ts';
import type { Env, Item } from '../../src/envs/types.ts';
import type { ChatRequest } from '../../src/model/types.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { lastUserText, ScriptedModel } from './scripted.ts';

const FIX = path.join(ROOT, 'test/fixtures/officeqa');

/**
 * (prediction, gold, EM, F1) as the original's `skillopt/envs/officeqa/evaluator.py` scores them
 * (its `evaluate`, run on each pair; the values are copied from its output).
 */
const ORIGINAL_SCORES: [string, string, number, number][] = [
  ['[8.124, 12.852].', '[8.124, 12.852]', 0, 0.5],
  ['[8.124, 12.852]', '[8.124, 12.852]', 1, 1],
  ['8.124, 12.852', '[8.124, 12.852]', 1, 1],
  ['[12.852, 8.124]', '[8.124, 12.852]', 0, 1],
  ['[8.124; 12.852]', '[8.124, 12.852]', 1, 1],
  ['[8.12, 12.85]', '[8.124, 12.852]', 0, 0],
  ['[1, 2, 3]', '[1, 2]', 0, 0.8],
  ['(3.1%, 4.2%)', '[3.1%, 4.2%]', 1, 1],
  ['-4.0%', '-4.0%', 1, 1],
  ['-4%', '-4.0%', 0, 0],
  ['4.0 %', '4.0%', 0, 0],
  ['4.0 percent', '4.0%', 0, 0],
  ['12.5%.', '12.5%', 0, 0],
  ['22,282 million dollars', '22,282', 1, 1],
  ['$22282', '22,282', 1, 1],
  ['$22.3 billion', '22.3', 1, 1],
  ['1,234 millions of dollars', '1234', 0, 0.6666666666666666],
  ['(nominal) 12 billion', '12', 1, 1],
  ['3.5 thousand', '3500', 0, 0],
  ['USD 1,000', '1000', 0, 0.6666666666666666],
  ['1,000 €', '1000', 0, 0.6666666666666666],
  ['1.13 ', '1.13', 1, 1],
  ['1,234,567', '1234567', 1, 1],
  ['1,234.50', '1234.5', 0, 0],
  ['-17.5', '-17.5', 1, 1],
  ['(17.5)', '-17.5', 0, 0],
  ['−17.5', '-17.5', 0, 0],
  ['- 17.5', '-17.5', 0, 0],
  ['March 1944', 'March 1944', 1, 1],
  ['March, 1944', 'March 1944', 1, 1],
  ['1944-03', 'March 1944', 0, 0],
  ['03/1944', 'March 1944', 0, 0],
  ['June 30, 1951', 'June 30 1951', 1, 1],
  ['Internal Revenue', 'internal revenue', 1, 1],
  ['The Internal Revenue Service', 'Internal Revenue', 0, 0.6666666666666666],
  ['U.S. Savings Bonds', 'US savings bonds', 0, 0.6666666666666666],
  ["Treasury's bills", 'Treasurys bills', 1, 1],
  ['Fiscal year 1962: 1.13', '1.13', 0, 0.4],
  ['millionaire', 'millionaire', 1, 1],
  ['millions_x', 'x', 0, 0],
  ['Year–end total', 'Year-end total', 0, 0.5],
  ['1.13.', '1.13', 0, 0],
  ['1.13!', '1.13', 1, 1],
  ['"1.13"', '1.13', 1, 1],
  ['1.13;', '1.13', 1, 1],
  ['22,282...', '22,282', 0, 0],
  ['yes.', 'Yes', 0, 0],
  ['$', '5', 0, 0],
  ['million', 'dollars', 1, 1],
  ['2 millionä', '2', 0, 0.6666666666666666],
  ['2 émillion', '2', 0, 0.6666666666666666],
  ['2\u00a0million', '2', 1, 1],
  ['2\u001cmillion', '2', 1, 1],
  ['3\u200b4', '3 4', 0, 0],
];

/** A docs root with two bulletins, a file outside it, and a symbolic link inside it that points out. */
function sandbox() {
  const dir = tmpDir();
  fs.cpSync(path.join(FIX, 'docs'), path.join(dir, 'docs'), { recursive: true });
  writeFiles(dir, { 'secret.txt': 'the gold answer is 42\n' });
  fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(dir, 'docs', 'treasury_bulletin_link.txt'));
  const corpus = new Corpus(resolveDocsRoots([path.join(dir, 'docs')], ''));
  return { dir, corpus, tools: new DocTools(corpus.roots, corpus.filesFor(['treasury_bulletin_1944_01.txt']).files) };
}

describe('officeqa tools', () => {
  it('read, grep and glob work on the item files', () => {
    const { tools } = sandbox();
    assert.match(
      tools.read('treasury_bulletin_1944_01.txt', 11, 4),
      /^11: Fiscal year\s+Total receipts[\s\S]*14: 1943\s+22,282[^\n]*\n\[lines 11-14 of \d+; read on from line 15\]$/,
    );
    assert.match(tools.grep('1943', 'treasury_bulletin_1944_01.txt'), /^14: 1943 +22,282/m);
    assert.match(tools.grep('DECEMBER 1943', 'treasury_bulletin_1944_01.txt'), /December 1943\s+165,877/);
    assert.equal(tools.glob('*1944*'), 'treasury_bulletin_1944_01.txt');
    assert.equal(tools.glob('*.txt'), 'treasury_bulletin_1944_01.txt', "only this item's files are listed");
    assert.match(tools.read('treasury_bulletin_1944_01.txt', 999), /nothing at line 999/);
  });

  it('refuses every path outside the item files', () => {
    const { dir, tools } = sandbox();
    const refused = [
      'treasury_bulletin_1951_06.txt', // in the corpus, but not this item's
      '../secret.txt',
      path.join(dir, 'secret.txt'),
      'treasury_bulletin_link.txt', // a link inside the root that points outside
      path.join(dir, 'docs', '..', 'secret.txt'),
      '/etc/passwd',
      'jsons/treasury_bulletin_1944_01.json',
    ];
    for (const p of refused) {
      assert.match(tools.read(p), /^error: access denied/, p);
      assert.match(tools.grep('42', p), /^error: access denied/, p);
    }
    assert.match(tools.read('no_such_file.txt'), /^error: not found/);
    assert.match(tools.read(''), /^error: no path given/);
    assert.equal(
      tools.run({ id: '1', name: 'bash', input: { cmd: 'cat /etc/passwd' } }).output,
      "error: unknown tool 'bash'; the tools are glob, read and grep",
    );
    assert.doesNotMatch(JSON.stringify(refused.map((p) => tools.read(p))), /gold answer/);
  });

  it('an item that lists no source files may open every corpus file, still none outside', () => {
    const { dir, corpus } = sandbox();
    const open = new DocTools(corpus.roots, corpus.filesFor([]).files);
    assert.match(open.read('treasury_bulletin_1951_06.txt'), /^1: TREASURY BULLETIN/);
    assert.match(open.read('../secret.txt'), /^error: access denied/);
    assert.match(
      open.read('treasury_bulletin_link.txt'),
      /^error: access denied/,
      'a link out of the root is not a corpus file',
    );
    assert.doesNotMatch(open.glob('*'), /link/);
    assert.match(open.read(path.join(dir, 'secret.txt')), /^error: access denied/);
  });

  it('scores as the original evaluator does (hard = its EM, soft = its token F1), case by case', () => {
    for (const [prediction, gold, em, f1] of ORIGINAL_SCORES) {
      const s = officeqaScore(prediction, gold);
      assert.deepEqual([s.hard, s.soft], [em, f1], `${JSON.stringify(prediction)} against ${JSON.stringify(gold)}`);
    }
    assert.deepEqual(officeqaScore('', '1'), { hard: 0, soft: 0, metric: 'EM' }, 'no answer scores 0 / 0');
  });
});

describe('officeqa env', () => {
  async function env(extra = ''): Promise<{ env: Env; items: Item[] }> {
    const dir = tmpDir();
    await materialize({
      benchmark: 'officeqa',
      raw: path.join(FIX, 'raw/officeqa_full.csv'),
      manifest: path.join(FIX, 'manifest'),
      out: path.join(dir, 'splits'),
    });
    writeFiles(dir, {
      'c.yaml': `_base_: ${path.join(ROOT, 'configs/officeqa/default.yaml')}\nmodel:\n  backend: sim\nenv:\n  split_dir: ${path.join(dir, 'splits')}\n  data_dirs: [${path.join(FIX, 'docs')}]\n  max_tool_turns: 4\n${extra}`,
    });
    const loaded = loadConfig(path.join(dir, 'c.yaml'), { environment: {} });
    const e = createEnv(loaded);
    const s = await e.load();
    return { env: e, items: [...s.train, ...s.val, ...s.test] };
  }

  it('runs the tool loop: calls, results back to the model, then the answer', async () => {
    const { env: e, items } = await env();
    const item = items.find((i) => i.id === 'oq-001')!;
    const target = new ScriptedModel('t', (req: ChatRequest, n) => {
      if (n === 0)
        return {
          text: 'Let me search.',
          toolCalls: [{ id: 'c1', name: 'grep', input: { pattern: '1943', path: 'treasury_bulletin_1944_01.txt' } }],
        };
      if (n === 1)
        return { text: '', toolCalls: [{ id: 'c2', name: 'read', input: { path: '../raw/officeqa_full.csv' } }] };
      const tool = req.messages
        .filter((m) => m.role === 'tool')
        .map((m) => m.content)
        .join('\n');
      const value = /1943\s+([\d,]+)/.exec(tool)?.[1];
      return `Receipts were ${value}.\n<answer>${value}</answer>`;
    });
    const t = await e.rollout(item, 'skill', { target, seed: 0 });
    assert.equal(target.requests.length, 3);
    assert.ok(target.requests.every((r) => r.tools?.map((x) => x.name).join(',') === 'glob,read,grep'));
    const second = target.requests[1]!.messages;
    assert.deepEqual(
      second.map((m) => m.role),
      ['user', 'assistant', 'tool'],
    );
    assert.equal((second[2] as { toolCallId: string }).toolCallId, 'c1');
    assert.match(target.requests[2]!.messages.at(-1)!.content as string, /^error: access denied/);
    assert.deepEqual([t.hard, t.soft], [1, 1]);
    const calls = t.conversation!.filter((c) => 'type' in c && c.type === 'tool_call');
    assert.deepEqual(
      calls.map((c) => (c as { cmd: string }).cmd),
      ['grep(pattern="1943", path="treasury_bulletin_1944_01.txt")', 'read(path="../raw/officeqa_full.csv")'],
    );
    const user = lastUserText(target.requests[0]!);
    assert.match(
      user,
      /## Question\nWhat were total budget receipts[\s\S]*## Candidate Files\n- treasury_bulletin_1944_01\.txt\n\n## Source Hints\n- https:\/\/fraser/,
    );
    assert.doesNotMatch(user, /Source Pages|22,282/, 'no gold page text by default');
  });

  it('the last turn has no tools and asks for the answer; no answer scores 0', async () => {
    const { env: e, items } = await env();
    const item = items.find((i) => i.id === 'oq-004')!;
    const target = new ScriptedModel('t', () => ({
      text: 'more',
      toolCalls: [{ id: 'x', name: 'glob', input: { pattern: '*' } }],
    }));
    const t = await e.rollout(item, '', { target, seed: 0 });
    assert.equal(target.requests.length, 4);
    assert.equal(target.requests[3]!.tools, undefined);
    assert.match(lastUserText(target.requests[3]!), /last tool call: give your final answer now/);
    assert.deepEqual([t.hard, t.soft], [0, 0]);
    assert.match(t.failReason!, /^tool-turn budget used up without a final answer: expected '165,877'/);
    const silent = await e.rollout(item, '', { target: new ScriptedModel('t', () => 'I cannot tell.'), seed: 0 });
    assert.match(silent.failReason!, /^neither a tool call nor a final answer/);
  });

  it('oracle_pages: true puts the gold page text in the prompt, tables as Markdown', async () => {
    const { env: e, items } = await env('  oracle_pages: true\n');
    const target = new ScriptedModel('t', () => '<answer>78,179</answer>');
    const t = await e.rollout(items.find((i) => i.id === 'oq-002')!, '', { target, seed: 0 });
    const user = lastUserText(target.requests[0]!);
    assert.match(
      user,
      /## Source Pages\n[\s\S]*### treasury_bulletin_1944_01\.txt, page 12\nTable 1\.- Budget Receipts[\s\S]*\| 1943 \| 22,282 \| 78,179 \|/,
    );
    assert.doesNotMatch(user, /165,877/, 'only the cited page');
    assert.equal(t.hard, 1);
    assert.match(t.feedback ?? '', /characters of oracle source pages/);
  });

  it('HTML tables become Markdown; unknown pages give nothing', () => {
    assert.equal(
      htmlToMarkdown('<table><tr><th>a</th><th>b &amp; c</th></tr><tr><td>1</td></tr></table>'),
      '| a | b & c |\n| --- | --- |\n| 1 |  |',
    );
    assert.equal(
      oraclePages(['https://x.org/doc?page=99'], ['treasury_bulletin_1944_01.txt'], [path.join(FIX, 'docs')]),
      '',
    );
  });

  it('clear errors: no corpus; a split whose every item needs a missing bulletin', async () => {
    assert.throws(
      () => resolveDocsRoots(['/no/such/dir'], ''),
      /OfficeQA needs its document corpus.*env\.data_dirs \[\/no\/such\/dir\]/,
    );
    const dir = tmpDir();
    writeFiles(dir, {
      'sp/train/items.json': JSON.stringify([
        { id: 'a', question: 'q', ground_truth: '1', source_files: ['treasury_bulletin_2001_01.txt'] },
      ]),
      'sp/val/items.json': '[]',
      'sp/test/items.json': '[]',
      'c.yaml': `model:\n  backend: sim\nenv:\n  name: officeqa\n  split_dir: sp\n  data_dirs: [${path.join(FIX, 'docs')}]\n`,
    });
    const loaded = loadConfig(path.join(dir, 'c.yaml'), { environment: {} });
    await assert.rejects(
      createEnv(loaded).load(),
      /split 'train' has no item left \(.*train\/items\.json\): all 1 were left out: train:a \(source file not in the document corpus: treasury_bulletin_2001_01\.txt\)/,
    );
  });

  /** The fixture's splits and a corpus without the 1962 bulletin (two test items need it). */
  async function partialCorpus(): Promise<{ dir: string; docs: string }> {
    const dir = tmpDir();
    const docs = path.join(dir, 'docs');
    fs.cpSync(path.join(FIX, 'docs'), docs, { recursive: true });
    fs.rmSync(path.join(docs, 'treasury_bulletin_1962_12.txt'));
    await materialize({
      benchmark: 'officeqa',
      raw: path.join(FIX, 'raw/officeqa_full.csv'),
      manifest: path.join(FIX, 'manifest'),
      out: path.join(dir, 'splits'),
    });
    return { dir, docs };
  }

  it('a bulletin missing from the corpus leaves out only the items that need it, with a warning naming them', async () => {
    const { dir, docs } = await partialCorpus();
    writeFiles(dir, {
      'c.yaml': `model:\n  backend: sim\nenv:\n  name: officeqa\n  split_dir: splits\n  data_dirs: [${docs}]\n`,
    });
    const splits = await createEnv(loadConfig(path.join(dir, 'c.yaml'), { environment: {} })).load();
    assert.deepEqual(
      [splits.train, splits.val, splits.test].map((s) => s.map((i) => i.id)),
      [
        ['oq-001', 'oq-005', 'oq-003'],
        ['oq-006', 'oq-002'],
        ['oq-004', 'oq-007'],
      ],
    );
    assert.equal(splits.warnings!.length, 1);
    assert.equal(
      splits.warnings![0],
      `env 'officeqa': 2 of 9 items left out, 7 kept: test:oq-008 (source file not in the document corpus: treasury_bulletin_1962_12.txt), test:oq-009 (source file not in the document corpus: treasury_bulletin_1962_12.txt). The document corpus is ${fs.realpathSync(docs)}: put the missing bulletins there (or add their directory to env.data_dirs) to include those items`,
    );
  });

  it('training warns about the items left out, in the run log', async () => {
    const { dir, docs } = await partialCorpus();
    writeFiles(dir, {
      'c.yaml': `model:\n  backend: sim\ntrain:\n  num_epochs: 1\n  batch_size: 3\nevaluation:\n  eval_test: false\noptimizer:\n  use_slow_update: false\n  use_meta_skill: false\nenv:\n  name: officeqa\n  split_dir: splits\n  start_blank: true\n  data_dirs: [${docs}]\n`,
    });
    const { runTraining } = await import('../../src/app/train.ts');
    const out = path.join(dir, 'run');
    const loaded = loadConfig(path.join(dir, 'c.yaml'), { environment: {} });
    await runTraining({
      loaded,
      outRoot: out,
      configFile: path.join(dir, 'c.yaml'),
      console: false,
      models: { target: new ScriptedModel('fake:t', () => '<answer>1</answer>') },
    });
    const events = fs
      .readFileSync(path.join(out, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const warned = events.filter((e) => e.type === 'log' && e.level === 'warn' && /left out/.test(e.message));
    assert.equal(warned.length, 1);
    assert.match(warned[0].message, /^env 'officeqa': 2 of 9 items left out, 7 kept: test:oq-008 /);
  });

  it('ratio mode lists the items left out in the split manifest; eval prints the warning', async () => {
    const { dir, docs } = await partialCorpus();
    writeFiles(dir, {
      'c.yaml': `model:\n  backend: sim\nenv:\n  name: officeqa\n  data_path: ${path.join(FIX, 'raw/officeqa_full.csv')}\n  split_ratio: "1:1:1"\n  split_output_dir: ${path.join(dir, 'gen')}\n  data_dirs: [${docs}]\n`,
    });
    const loaded = loadConfig(path.join(dir, 'c.yaml'), { environment: {} });
    const splits = await createEnv(loaded).load();
    assert.equal(splits.train.length + splits.val.length + splits.test.length, 7);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'gen/split_manifest.json'), 'utf8'));
    assert.deepEqual(manifest.left_out, [
      { id: 'oq-008', reason: 'source file not in the document corpus: treasury_bulletin_1962_12.txt' },
      { id: 'oq-009', reason: 'source file not in the document corpus: treasury_bulletin_1962_12.txt' },
    ]);
    assert.match(
      splits.warnings![0]!,
      new RegExp(
        `; all of them are listed in ${path.join(dir, 'gen', 'split_manifest.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
      ),
    );
    const { runEvaluation } = await import('../../src/app/eval/evaluate.ts');
    let printed = '';
    const out = new Writable({
      write: (chunk, _enc, done) => {
        printed += String(chunk);
        done();
      },
    });
    writeFiles(dir, { 'skill.md': '# Skill\n' });
    await runEvaluation({
      loaded,
      outRoot: path.join(dir, 'eval'),
      configFile: path.join(dir, 'c.yaml'),
      skillFiles: [path.join(dir, 'skill.md')],
      split: 'test',
      models: { targets: [new ScriptedModel('fake:t', () => '<answer>1</answer>')] },
      out,
    });
    assert.match(
      printed,
      /^warning: env 'officeqa': 2 of 9 items left out, 7 kept: oq-008 \(source file not in the document corpus/m,
    );
  });
});
