import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { shuffleChoices, type MathItem } from '../../src/envs/livemath/env.ts';
import { materialize } from '../../src/envs/materialize.ts';
import { createEnv } from '../../src/envs/build.ts';
import { parsePyStringList } from '../../src/envs/docvqa/env.ts';
import { truncateContext } from '../../src/envs/searchqa/env.ts';
import type { Env, Item } from '../../src/envs/types.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { lastUserText, ScriptedModel } from './scripted.ts';
import { RoleSchema } from '../../src/config/schema.ts';
import { getBackend } from '../../src/model/registry.ts';
import type { ChatModel } from '../../src/model/types.ts';
import { startFakeProvider } from '../helpers/fake-provider.ts';

const FIX = path.join(ROOT, 'test/fixtures');

/** The benchmark's fixture, materialised from its manifest, behind its shipped config. */
async function benchEnv(bench: string, extra = ''): Promise<{ env: Env; dir: string }> {
  const dir = tmpDir();
  const raw = path.join(FIX, bench, bench === 'officeqa' ? 'raw/officeqa_full.csv' : 'raw');
  await materialize({
    benchmark: bench,
    raw,
    manifest: path.join(FIX, bench, 'manifest'),
    out: path.join(dir, 'splits'),
  });
  writeFiles(dir, {
    'config.yaml': `_base_: ${path.join(ROOT, 'configs', bench, 'default.yaml')}\nmodel:\n  backend: sim\nenv:\n  split_dir: ${path.join(dir, 'splits')}\n${extra}`,
  });
  const loaded = loadConfig(path.join(dir, 'config.yaml'), { environment: {} });
  return { env: createEnv(loaded, path.join(dir, 'run')), dir };
}

const all = (s: { train: Item[]; val: Item[]; test: Item[] }) => [...s.train, ...s.val, ...s.test];

describe('searchqa', () => {
  it('prompt with context and question, EM and F1 after SQuAD normalisation', async () => {
    const { env } = await benchEnv('searchqa');
    const splits = await env.load();
    assert.deepEqual([splits.train.length, splits.val.length, splits.test.length], [4, 3, 6]);
    const item = all(splits).find((i) => i.id === 'sq0002')!;
    const target = new ScriptedModel('fake:t', () => 'The snippets say so.\n<answer>the Amazon river.</answer>');
    const t = await env.rollout(item, '# Skill\nBe short.', { target, seed: 1 });
    const req = target.requests[0]!;
    assert.match(req.system!, /## Skill\n\n# Skill\nBe short\./);
    assert.match(req.system!, /<answer><\/answer> tags/);
    assert.match(
      lastUserText(req),
      /^## Context\n\[DOC\] \[TLE\] Amazon - Encyclopedia[\s\S]*\n\n## Question\nThe longest river in South America$/,
    );
    assert.deepEqual([t.hard, t.soft], [1, 1]);
    const partial = await env.rollout(item, '', {
      target: new ScriptedModel('t', () => '<answer>Amazon basin</answer>'),
      seed: 1,
    });
    assert.equal(partial.hard, 0);
    assert.ok(Math.abs(partial.soft - 2 / 3) < 1e-9, 'F1 against "Amazon River"');
    assert.match(partial.failReason!, /^EM=0: predicted 'Amazon basin' but expected \["Amazon","Amazon River"\]/);
    const blank = await env.rollout(item, '', { target: new ScriptedModel('t', () => ''), seed: 1 });
    assert.deepEqual([blank.hard, blank.soft], [0, 0]);
    assert.doesNotMatch(
      (await env.rollout(item, '', { target: new ScriptedModel('t', () => 'x'), seed: 1 })).systemPrompt!,
      /## Skill/,
      'no skill section for a blank skill',
    );
  });

  it('ratio mode on the published files (a directory of Parquet files, one per split)', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'c.yaml': `model:\n  backend: sim\nenv:\n  name: searchqa\n  data_path: ${path.join(FIX, 'searchqa/raw')}\n  split_ratio: "1:1:2"\n`,
    });
    const splits = await createEnv(loadConfig(path.join(dir, 'c.yaml'), { environment: {} })).load();
    assert.deepEqual([splits.train.length, splits.val.length, splits.test.length], [4, 4, 8]);
    assert.deepEqual(all(splits).find((i) => i.id === 'sq0012')!.answers, ['Mandarin', 'Mandarin Chinese']);
  });

  it('context is cut at [DOC] boundaries', () => {
    const ctx = '[DOC] aaaa [DOC] bbbb [DOC] cccc';
    assert.equal(truncateContext(ctx, 100), ctx);
    assert.equal(truncateContext(ctx, 22), '[DOC] aaaa [DOC] bbbb');
    assert.equal(truncateContext(`[DOC] ${'x'.repeat(50)}`, 10), '[DOC] xxxx...[truncated]');
  });
});

describe('livemathematicianbench', () => {
  it('the published files: the right option, kept apart from the wrong ones, is added back (env and materialize)', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'c.yaml': `model:\n  backend: sim\nenv:\n  name: livemathematicianbench\n  data_path: ${path.join(FIX, 'livemathematicianbench/raw')}\n  split_ratio: "4:3:4"\n`,
    });
    const ratio = all(
      await createEnv(loadConfig(path.join(dir, 'c.yaml'), { environment: {} }), path.join(dir, 'run')).load(),
    ) as MathItem[];
    const { env } = await benchEnv('livemathematicianbench');
    const materialized = all(await env.load()) as MathItem[];
    for (const items of [ratio, materialized]) {
      assert.equal(items.length, 11, 'every published item loads');
      for (const item of items) {
        assert.deepEqual(
          item.choices.map((c) => c.label),
          ['A', 'B', 'C', 'D', 'E'],
          item.id,
        );
        assert.deepEqual(
          item.choices.find((c) => c.label === item.correct_choice.label),
          item.correct_choice,
          item.id,
        );
      }
      const q3 = items.find((i) => i.id === '202511:3')!;
      assert.deepEqual(q3.correct_choice, { label: 'D', text: '$f$ attains a maximum on $[a,b]$.' });
      assert.equal(q3.choices[3]!.text, q3.correct_choice.text, 'in label order, as published');
      assert.equal(q3.question, 'Let $f$ be continuous on $[a,b]$. Which statement is guaranteed?');
      assert.deepEqual(q3.theorem_type, ['Existence']);
    }
    assert.deepEqual(
      ratio.map((i) => i.id).sort(),
      materialized.map((i) => i.id).sort(),
      'ids are <month>:<no>, the month from the file',
    );
  });

  it('other shapes: every option listed with a label or a mapping; a theorem given as an extracted environment', async () => {
    const dir = tmpDir();
    const q = (no: number, mcq: unknown, extra = {}) => ({
      no,
      paper_link: '',
      theorem_type: ['General'],
      ...extra,
      mcq: { question: `Question ${no}?`, ...(mcq as object) },
    });
    writeFiles(dir, {
      'qa_202603_final.json': JSON.stringify([
        q(1, { choices: ['one', 'two', 'three'], correct_choice: 'B' }),
        q(2, { choices: { A: 'yes', B: 'no' }, correct_choice: { label: 'a.', text: 'yes' } }),
        q(
          3,
          {
            correct_choice: { label: 'C', text: 'right' },
            choices: [
              { label: 'A', text: 'w1' },
              { label: 'B', text: 'w2' },
            ],
          },
          { theorem: { env_name: 'thm', content: 'The statement.', label: null } },
        ),
        { no: 4, paper_link: '', theorem_type: ['General'] },
      ]),
      'bad.json': JSON.stringify([
        q(1, {
          choices: [
            { label: 'A', text: 'w1' },
            { label: 'B', text: 'w2' },
          ],
          correct_choice: { label: 'A', text: 'right' },
        }),
      ]),
    });
    const { readLiveMathRaw, toMathItem } = await import('../../src/envs/livemath/env.ts');
    const items = (await readLiveMathRaw(path.join(dir, 'qa_202603_final.json'))).map((r) => toMathItem(r));
    assert.deepEqual(
      items.map((i) => i && [i.id, i.correct_choice.label, i.correct_choice.text, i.choices.length]),
      [['202603:1', 'B', 'two', 3], ['202603:2', 'A', 'yes', 2], ['202603:3', 'C', 'right', 3], undefined],
    );
    assert.equal(items[2]!.theorem, 'The statement.');
    const [bad] = await readLiveMathRaw(path.join(dir, 'bad.json'));
    assert.throws(
      () => toMathItem(bad!),
      /bad\.json:1 \(item 1\): 'correct_choice' A says "right" but option A in 'choices' says "w1"/,
    );
  });

  it('choices shuffled per seed and relabelled; the label is scored', async () => {
    const { env } = await benchEnv('livemathematicianbench');
    const splits = await env.load();
    const item = all(splits).find((i) => i.id === '202512:1') as MathItem;
    assert.equal(item.type, 'Universal');
    assert.equal(item.choices.length, 5);
    const orders = new Set<string>();
    for (let seed = 0; seed < 12; seed++) {
      const { choices, correct } = shuffleChoices(item, seed);
      assert.deepEqual(
        choices.map((c) => c.label),
        ['A', 'B', 'C', 'D', 'E'],
      );
      assert.equal(correct.text, 'All eigenvalues of A are real.');
      orders.add(choices.map((c) => c.text).join('|'));
    }
    assert.ok(orders.size > 3, 'different seeds give different orders');
    assert.deepEqual(shuffleChoices(item, 3), shuffleChoices(item, 3), 'the same seed gives the same order');
    const { correct } = shuffleChoices(item, 7);
    const target = new ScriptedModel('t', (req) => {
      const line = lastUserText(req)
        .split('\n')
        .find((l) => l.endsWith('All eigenvalues of A are real.'))!;
      return `Only real eigenvalues hold.\n<answer>${line[0]}</answer>`;
    });
    const t = await env.rollout(item, '', { target, seed: 7 });
    assert.deepEqual([t.hard, t.soft], [1, 1]);
    assert.match(lastUserText(target.requests[0]!), /^## Question\n.*\n\n## Choices\nA\. /);
    assert.doesNotMatch(lastUserText(target.requests[0]!), /Theorem/, 'no theorem unless use_theorem');
    const wrongLabel = correct.label === 'A' ? 'B' : 'A';
    const w = await env.rollout(item, '', {
      target: new ScriptedModel('t', () => `<answer>(${wrongLabel})</answer>`),
      seed: 7,
    });
    assert.equal(w.hard, 0);
    assert.match(
      w.failReason!,
      new RegExp(`^MCQ=0: predicted '\\(${wrongLabel}\\)' but expected '${correct.label}\\. All eigenvalues`),
    );
    const byText = await env.rollout(item, '', {
      target: new ScriptedModel('t', () => '<answer>all eigenvalues of a are real.</answer>'),
      seed: 7,
    });
    assert.equal(byText.hard, 1, 'the text of the right option picks it');
  });

  it('use_theorem and use_sketch add them; shuffle_choices: false keeps the order', async () => {
    const { env } = await benchEnv(
      'livemathematicianbench',
      '  use_theorem: true\n  use_sketch: true\n  shuffle_choices: false\n',
    );
    const item = all(await env.load()).find((i) => i.id === '202511:3')!;
    const target = new ScriptedModel('t', () => '<answer>D</answer>');
    const t = await env.rollout(item, '', { target, seed: 99 });
    assert.match(
      lastUserText(target.requests[0]!),
      /\nC\. \$f\$ is monotone on \$\[a,b\]\$\.\nD\. \$f\$ attains a maximum on \$\[a,b\]\$\.\nE\. [\s\S]*## Theorem\nA continuous function[\s\S]*## Proof Sketch\nCompactness\./,
    );
    assert.equal(t.hard, 1, 'the published label of the right option');
  });
});

describe('docvqa', () => {
  it('sends the page image with the question; ANLS scoring', async () => {
    const { env, dir } = await benchEnv('docvqa');
    const splits = await env.load();
    const item = all(splits).find((i) => i.id === '49155')!;
    assert.equal(item.type, 'table/list');
    assert.equal(item.image, path.join(dir, 'splits', 'images', 'q49155_d103.png'));
    const target = new ScriptedModel('t', () => '<answer>$1,250.00</answer>');
    const t = await env.rollout(item, 'skill', { target, seed: 0 });
    const content = target.requests[0]!.messages[0]!.content as { type: string; image?: string; text?: string }[];
    assert.deepEqual(
      content.map((p) => p.type),
      ['text', 'image'],
    );
    assert.equal(content[1]!.image, item.image);
    assert.match(content[0]!.text!, /What is the total amount in the invoice\?/);
    assert.deepEqual([t.hard, t.soft], [1, 1]);
    const near = await env.rollout(item, '', {
      target: new ScriptedModel('t', () => '<answer>1,250.0</answer>'),
      seed: 0,
    });
    assert.equal(near.hard, 0);
    assert.ok(near.soft > 0.85 && near.soft < 1);
    assert.match(t.userPrompt!, /\[image\] q49155_d103\.png/);
  });

  it('reads the original CSV split layout, with Python-literal answer lists', async () => {
    const dir = tmpDir();
    writeFiles(dir, { 'img/a.png': 'an image' });
    const rows = (ids: string[]) =>
      `questionId,question,answers,image_path,topic\n${ids.map((id) => `${id},"What is it? document_path: x","['it''s', ""b""]",img/a.png,form`).join('\n')}\n`.replace(
        /''/g,
        "\\'",
      );
    writeFiles(dir, {
      'sp/train/train.csv': rows(['1']),
      'sp/val/val.csv': rows(['2']),
      'sp/test/test.csv': rows(['3']),
    });
    writeFiles(dir, { 'c.yaml': `model:\n  backend: sim\nenv:\n  name: docvqa\n  split_dir: sp\n` });
    const loaded = loadConfig(path.join(dir, 'c.yaml'), { environment: {} });
    const env = createEnv(loaded);
    const item = (await env.load()).train[0]!;
    assert.equal(item.question, 'What is it?');
    assert.deepEqual(item.answers, ["it's", 'b']);
    assert.equal(item.type, 'form');
    assert.deepEqual(parsePyStringList(`['a, b', "c"]`), ['a, b', 'c']);
    assert.equal(parsePyStringList('not a list'), undefined);
  });

  it("the task's own annotation JSON (val_v1.0.json): image paths relative to the file; OCR results beside it are not items", async () => {
    const task = path.join(FIX, 'docvqa/task1/val');
    for (const dataPath of [path.join(task, 'val_v1.0.json'), task]) {
      const dir = tmpDir();
      writeFiles(dir, {
        'c.yaml': `model:\n  backend: sim\nenv:\n  name: docvqa\n  data_path: ${dataPath}\n  split_ratio: "2:2:2"\n`,
      });
      const env = createEnv(loadConfig(path.join(dir, 'c.yaml'), { environment: {} }), path.join(dir, 'run'));
      const items = all(await env.load());
      assert.equal(items.length, 6, dataPath);
      const item = items.find((i) => i.id === '57345')!;
      assert.equal(item.image, path.join(task, 'documents/txpp0227_10.png'));
      assert.equal(item.type, 'layout|form');
      assert.deepEqual(item.answers, ['Dr. William J. Darby']);
      const target = new ScriptedModel('t', () => '<answer>Dr. William J. Darby</answer>');
      assert.equal((await env.rollout(item, '', { target, seed: 0 })).hard, 1);
      assert.equal(
        (target.requests[0]!.messages[0]!.content as { image?: string }[])[1]!.image,
        item.image,
        'the page itself is sent',
      );
    }
    const out = path.join(tmpDir(), 'splits');
    await materialize({ benchmark: 'docvqa', raw: path.join(task, 'val_v1.0.json'), out, ratio: '2:2:2' });
    const written = ['train', 'val', 'test'].flatMap(
      (s) => JSON.parse(fs.readFileSync(path.join(out, s, 'items.json'), 'utf8')) as Record<string, unknown>[],
    );
    const row = written.find((r) => r.id === '57346')!;
    assert.equal(row.image_path, 'images/q57346_d14282.png');
    assert.deepEqual(
      fs.readFileSync(path.join(out, String(row.image_path))),
      fs.readFileSync(path.join(task, 'documents/mxcj0037_1.png')),
    );
  });

  it('image_detail goes out with the page: Chat Completions image_url.detail, Responses detail; providers without the field send none', async () => {
    const fake = await startFakeProvider({ respond: () => ({ text: '<answer>22</answer>' }) });
    try {
      const target = (backend: string, model: string, options: Record<string, unknown> = {}): ChatModel =>
        getBackend(backend)!.create(
          RoleSchema.parse({
            backend,
            model,
            base_url: options.provider === 'azure' ? fake.url : `${fake.url}/v1`,
            options,
          }),
          {
            role: 'target',
            environment: { OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k', AZURE_OPENAI_API_KEY: 'k' },
            reasoningEffort: '',
            seed: 1,
          },
        ) as ChatModel;
      const inputImage = () =>
        sent()
          .input.flatMap((m: { content?: unknown }) => (Array.isArray(m.content) ? m.content : []))
          .find((p: { type: string }) => p.type === 'input_image');
      const docEnv = async (extra: string) => {
        const dir = tmpDir();
        writeFiles(dir, {
          'c.yaml': `model:\n  backend: sim\nenv:\n  name: docvqa\n  data_path: ${path.join(FIX, 'docvqa/task1/val/val_v1.0.json')}\n  split_ratio: "2:2:2"\n${extra}`,
        });
        const env = createEnv(loadConfig(path.join(dir, 'c.yaml'), { environment: {} }));
        return { env, item: all(await env.load()).find((i) => i.id === '57348')! };
      };
      const sent = () => fake.requests.at(-1)!.body;
      for (const detail of ['high', 'low', 'auto']) {
        const { env, item } = await docEnv(`  image_detail: ${detail}\n`);
        assert.equal(
          (await env.rollout(item, '', { target: target('openai_chat', 'gpt-4o', { provider: 'openai' }), seed: 0 }))
            .hard,
          1,
        );
        assert.equal(sent().messages[1].content[1].type, 'image_url');
        assert.equal(sent().messages[1].content[1].image_url.detail, detail, 'Chat Completions');
        await env.rollout(item, '', {
          target: target('openai_chat', 'gpt-4o', { provider: 'openai', api: 'responses' }),
          seed: 0,
        });
        assert.equal(inputImage().detail, detail, 'Responses API');
        await env.rollout(item, '', { target: target('openai_chat', 'dep', { provider: 'azure' }), seed: 0 });
        assert.equal(sent().messages[1].content[1].image_url.detail, detail, 'Azure, Chat Completions');
        await env.rollout(item, '', {
          target: target('openai_chat', 'dep', { provider: 'azure', api: 'responses' }),
          seed: 0,
        });
        assert.match(fake.requests.at(-1)!.path, /\/openai\/.*responses$/);
        assert.equal(inputImage().detail, detail, 'Azure, Responses API');
      }
      const { env, item } = await docEnv('');
      await env.rollout(item, '', { target: target('openai_chat', 'gpt-4o', { provider: 'openai' }), seed: 0 });
      assert.equal('detail' in sent().messages[1].content[1].image_url, false, 'unset: none sent');
      const high = await docEnv('  image_detail: high\n');
      assert.equal(
        (await high.env.rollout(high.item, '', { target: target('anthropic', 'claude-sonnet-4-5'), seed: 0 })).hard,
        1,
      );
      assert.equal(sent().messages[0].content.filter((p: { type: string }) => p.type === 'image').length, 1);
      assert.doesNotMatch(JSON.stringify(sent()), /"detail"/, 'Anthropic has no such field');
      assert.equal(
        (await high.env.rollout(high.item, '', { target: target('openai_compatible', 'qwen-vl'), seed: 0 })).hard,
        1,
      );
      assert.doesNotMatch(JSON.stringify(sent()), /"detail"/, 'an OpenAI-compatible server gets the plain image');
    } finally {
      await fake.close();
    }
  });

  it('an annotation file whose image is missing: an error naming the question and the path', async () => {
    const dir = tmpDir();
    fs.copyFileSync(path.join(FIX, 'docvqa/task1/val/val_v1.0.json'), path.join(dir, 'val_v1.0.json'));
    writeFiles(dir, { 'c.yaml': `model:\n  backend: sim\nenv:\n  name: docvqa\n  data_path: val_v1.0.json\n` });
    const expected = new RegExp(
      `val_v1\\.0\\.json:1 \\(item 1\\): image of question 57344 not found: 'documents/txpp0227_10\\.png' \\(looked for ${path.join(dir, 'documents/txpp0227_10.png').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`,
    );
    await assert.rejects(createEnv(loadConfig(path.join(dir, 'c.yaml'), { environment: {} })).load(), expected);
    await assert.rejects(
      materialize({ benchmark: 'docvqa', raw: path.join(dir, 'val_v1.0.json'), out: path.join(dir, 'o') }),
      expected,
    );
  });

  it('ratio mode on the published Parquet: embedded images become data URIs', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'c.yaml': `model:\n  backend: sim\nenv:\n  name: docvqa\n  data_path: ${path.join(FIX, 'docvqa/raw/validation-00000-of-00001.parquet')}\n  split_ratio: "3:3:4"\n`,
    });
    const loaded = loadConfig(path.join(dir, 'c.yaml'), { environment: {} });
    const splits = await createEnv(loaded).load();
    assert.equal(all(splits).length, 10);
    assert.match(String(splits.test[0]!.image), /^data:image\/png;base64,iVBORw0KGgo/);
  });
});

describe('benchmark loaders name the file, line and field of bad records', () => {
  const cases: [string, string, RegExp][] = [
    [
      'searchqa',
      '[{"id": "a", "question": "q", "answers": ["x"]}]',
      /items\.json:1 \(item 1\): missing field 'context'/,
    ],
    ['searchqa', '[{"id": "a", "question": "q", "context": "c", "answers": []}]', /missing field 'answers'/],
    [
      'livemathematicianbench',
      '[{"id": "m:1", "question": "q", "choices": ["a", "b"]}]',
      /items\.json:1 \(item 1\): missing or unknown 'correct_choice'/,
    ],
    [
      'livemathematicianbench',
      '[{"id": "m:1", "question": "q", "choices": ["a"], "correct_choice": "A"}]',
      /missing field 'choices' \(at least two options, the correct one included\)/,
    ],
    [
      'livemathematicianbench',
      '[{"id": "m:1", "choices": ["a", "b"], "correct_choice": "A"}]',
      /missing field 'question'/,
    ],
    [
      'docvqa',
      '[{"questionId": "1", "question": "q", "answers": ["x"], "image_path": "nope.png"}]',
      /items\.json:1 \(item 1\): image of question 1 not found: 'nope\.png'/,
    ],
    ['docvqa', '[{"questionId": "1", "question": "q", "image_path": "nope.png"}]', /missing field 'answers'/],
    [
      'officeqa',
      '[{"uid": "u1", "question": "q", "source_files": []}]',
      /items\.json:1 \(item 1\): missing field 'ground_truth'/,
    ],
  ];
  for (const [bench, train, error] of cases) {
    it(`${bench}: ${error.source}`, async () => {
      const dir = tmpDir();
      writeFiles(dir, {
        'sp/train/items.json': train,
        'sp/val/items.json': '[]',
        'sp/test/items.json': '[]',
        'c.yaml': `model:\n  backend: sim\nenv:\n  name: ${bench}\n  split_dir: sp\n${bench === 'officeqa' ? `  data_dirs: [${path.join(FIX, 'officeqa/docs')}]\n` : ''}`,
      });
      const loaded = loadConfig(path.join(dir, 'c.yaml'), { environment: {} });
      await assert.rejects(createEnv(loaded).load(), error);
    });
  }
});
