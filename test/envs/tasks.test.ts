import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { createEnv } from '../../src/envs/build.ts';
import type { Env } from '../../src/envs/types.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { lastUserText, ScriptedModel } from './scripted.ts';

const ENV_ONLY = { environment: {} };

function setup(envYaml: string, files: Record<string, string>): { env: Env; dir: string } {
  const dir = tmpDir();
  writeFiles(dir, { ...files, 'config.yaml': `model:\n  backend: sim\nenv:\n  name: tasks\n${envYaml}` });
  const loaded = loadConfig(path.join(dir, 'config.yaml'), ENV_ONLY);
  return { env: createEnv(loaded, path.join(dir, 'run')), dir };
}

const capitals = Array.from({ length: 10 }, (_, i) =>
  JSON.stringify({
    qid: `c${i}`,
    question: `Capital of country ${i}?`,
    gold: [`City ${i}`, `C${i}`],
    kind: i % 2 ? 'odd' : 'even',
  }),
).join('\n');

describe('tasks env', () => {
  it('maps fields, renders the template, sends the skill as system prompt and scores', async () => {
    const { env } = setup(
      `  data_path: data.jsonl\n  split_ratio: "4:3:3"\n  fields:\n    input: question\n    answer: gold\n    id: qid\n    type: kind\n  prompt:\n    user: "Q: {{input}} (id {{qid}})"\n  scorer:\n    type: exact_match\n    normalize: squad\n`,
      { 'data.jsonl': capitals },
    );
    const splits = await env.load();
    assert.deepEqual([splits.train.length, splits.val.length, splits.test.length], [4, 3, 3]);
    const item = splits.test[0]!;
    const n = String(item.id).slice(1);
    const target = new ScriptedModel('fake:t', () => `thinking\n<answer>the city ${n}</answer>`);
    const t = await env.rollout(item, '# My skill\nBe brief.', { target, seed: 1 });
    const req = target.requests[0]!;
    assert.equal(req.purpose, 'rollout');
    assert.match(
      req.system!,
      /^# My skill\nBe brief\.\n\nFinish your reply with the final answer alone inside <answer><\/answer> tags\.$/,
    );
    assert.equal(lastUserText(req), `Q: Capital of country ${n}? (id c${n})`);
    assert.equal(t.hard, 1, 'SQuAD normalisation drops "the"; one of several golds matches');
    assert.equal(t.predicted, `the city ${n}`);
    assert.equal(t.taskType, Number(n) % 2 ? 'odd' : 'even');
    assert.deepEqual(env.taskTypes!(), ['even', 'odd']);
    const wrong = await env.rollout(item, '', { target: new ScriptedModel('fake:t', () => 'Paris'), seed: 1 });
    assert.equal(wrong.hard, 0);
    assert.equal(wrong.failReason, `EM=0: predicted 'Paris' but expected ["City ${n}","C${n}"]`);
    assert.match(
      wrong.feedback!,
      /no answer in the required form; 'Paris' was taken as the answer by the fallback rule/,
    );
    assert.deepEqual(Object.keys(wrong.conversation!.at(-1)!), ['role', 'content']);
  });

  it('names file, line and field of bad records before any call', async () => {
    const missing = setup(`  data_path: d.jsonl\n  fields:\n    input: question\n`, {
      'd.jsonl': '{"question": "a", "answer": "x"}\n{"question": "b"}\n',
    });
    await assert.rejects(missing.env.load(), /d\.jsonl:2: missing field 'answer' \(the expected answer/);
    const noInput = setup(`  data_path: d.csv\n`, {
      'd.csv': `input,answer\nq1,a1\n${',a2\n'.replace(',', '')}q3,a3\n`,
    });
    await assert.rejects(noInput.env.load(), /d\.csv:3: /);
    const template = setup(`  data_path: d.jsonl\n  prompt:\n    user: "{{input}} / {{hint}}"\n`, {
      'd.jsonl': '{"input": "a", "answer": "x", "hint": "h"}\n{"input": "b", "answer": "y"}\n',
    });
    await assert.rejects(
      template.env.load(),
      /d\.jsonl:2: missing field 'hint', used by the prompt template as \{\{hint\}\}/,
    );
    const images = setup(`  data_path: d.jsonl\n  fields:\n    images: img\n`, {
      'd.jsonl': '{"input": "a", "answer": "x", "img": "nope.png"}\n',
    });
    await assert.rejects(images.env.load(), /d\.jsonl:1: image not found: 'nope\.png'/);
    const choice = setup(`  data_path: d.jsonl\n  scorer:\n    type: choice\n`, {
      'd.jsonl': '{"input": "a", "answer": "B"}\n',
    });
    await assert.rejects(choice.env.load(), /d\.jsonl:1: missing field 'choices'/);
    const regex = setup(`  data_path: d.jsonl\n  scorer:\n    type: regex\n`, {
      'd.jsonl': '{"input": "a", "answer": "(unclosed"}\n',
    });
    await assert.rejects(regex.env.load(), /d\.jsonl:1: field 'answer' is not a valid regular expression/);
  });

  it('rejects misspelt options with a suggestion', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'c.yaml': 'model:\n  backend: sim\nenv:\n  name: tasks\n  data_path: d.jsonl\n  fields:\n    inptu: question\n',
    });
    assert.throws(
      () => loadConfig(path.join(dir, 'c.yaml'), ENV_ONLY),
      /c\.yaml: unknown key 'env\.fields\.inptu'.*did you mean 'input'/,
    );
    writeFiles(dir, { 'd.yaml': 'model:\n  backend: sim\nenv:\n  name: tasks\n  scorer:\n    type: exact\n' });
    assert.throws(() => loadConfig(path.join(dir, 'd.yaml'), ENV_ONLY), /env\.scorer/);
    writeFiles(dir, {
      'e.yaml': 'model:\n  backend: sim\nenv:\n  name: tasks\n  scorer:\n    type: numeric\n    abs_tl: 1\n',
    });
    assert.throws(
      () => loadConfig(path.join(dir, 'e.yaml'), ENV_ONLY),
      /unknown key 'env\.scorer\.abs_tl'.*did you mean 'abs_tol'/,
    );
  });

  it('separate files per split, context and images, a second turn when the tag is missing', async () => {
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const { env, dir } = setup(
      `  train_file: train.jsonl\n  val_file: val.jsonl\n  test_file: test.jsonl\n  max_turns: 2\n  fields:\n    context: passage\n    images: pics\n  scorer:\n    type: numeric\n    abs_tol: 0.5\n`,
      {
        'train.jsonl': '{"input": "How many?", "answer": 3, "passage": "three cats", "pics": ["img/a.png"]}\n',
        'val.jsonl': '{"input": "How many?", "answer": 4, "passage": "four", "pics": "img/a.png"}\n',
        'test.jsonl': '{"input": "How many?", "answer": "1,200", "passage": "many", "pics": []}\n',
        'img/a.png': png.toString('latin1'),
      },
    );
    const splits = await env.load();
    assert.deepEqual(
      splits.train.map((i) => i.id),
      ['train:1'],
    );
    assert.equal(splits.train[0]!.images && (splits.train[0]!.images as string[])[0], path.join(dir, 'img/a.png'));
    const target = new ScriptedModel('fake:t', (_req, n) =>
      n === 0 ? 'It is 3.2, I think' : 'Sorry: <answer>3.2</answer>',
    );
    const t = await env.rollout(splits.train[0]!, 'skill', { target, seed: 0 });
    assert.equal(target.requests.length, 2, 'a second turn asked for the tagged answer');
    const first = target.requests[0]!.messages[0]!;
    assert.ok(Array.isArray(first.content));
    assert.deepEqual(
      (first.content as { type: string }[]).map((p) => p.type),
      ['text', 'image'],
    );
    assert.match(lastUserText(target.requests[0]!), /^three cats\n\nHow many\?$/);
    assert.equal(target.requests[1]!.messages.length, 3);
    assert.equal(t.hard, 1, '3.2 is within 0.5 of 3');
    assert.deepEqual(t.usage, { input: 20, output: 10, cached: 0, reasoning: 0 });
    const t2 = await env.rollout(splits.test[0]!, 'skill', {
      target: new ScriptedModel('x', () => '<answer>1200</answer>'),
      seed: 0,
    });
    assert.equal(t2.hard, 1);
  });

  it('judge scorer: the env asks for a judge and uses it', async () => {
    const { env } = setup(
      `  data_path: d.jsonl\n  split_ratio: "1:1:1"\n  scorer:\n    type: judge\n    rubric: Mentions a colour.\n`,
      {
        'd.jsonl': '{"input": "Sky?", "answer": "blue"}\n{"input": "Grass?"}\n{"input": "Snow?", "answer": "white"}\n',
      },
    );
    assert.equal(env.usesJudge, true);
    const splits = await env.load();
    const item = [...splits.train, ...splits.val, ...splits.test].find((i) => i.input === 'Grass?')!;
    const judge = new ScriptedModel('fake:j', () => '{"verdict": "incorrect", "score": 0.2, "reason": "no colour"}');
    const t = await env.rollout(item, '', {
      target: new ScriptedModel('t', () => '<answer>tall</answer>'),
      judge,
      seed: 0,
    });
    assert.deepEqual([t.hard, t.soft], [0, 0.2]);
    assert.match(t.feedback!, /judge: no colour/);
    assert.match(t.failReason!, /^JUDGE=0/);
  });

  it('writes the generated split so that it reads back with the same config', async () => {
    const { env, dir } = setup(
      `  data_path: data.jsonl\n  split_ratio: "4:3:3"\n  fields:\n    input: question\n    answer: gold\n`,
      { 'data.jsonl': capitals.replace(/"qid":"c\d",/g, '') },
    );
    const a = await env.load();
    const gen = path.join(dir, 'run', '_generated_splits', 'tasks_4-3-3_seed42');
    const stored = JSON.parse(fs.readFileSync(path.join(gen, 'test', 'items.json'), 'utf8'));
    assert.deepEqual(
      stored.map((r: { id: string }) => r.id),
      a.test.map((i) => i.id),
    );
    assert.match(a.test[0]!.id, /^data:\d+$/);
  });
});

describe('tasks env config checks', () => {
  it('a regex rule needs a valid pattern', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'a.yaml': 'model:\n  backend: sim\nenv:\n  name: tasks\n  extract:\n    mode: regex\n',
      'b.yaml': 'model:\n  backend: sim\nenv:\n  name: tasks\n  scorer:\n    type: regex\n    pattern: "(["\n',
    });
    assert.throws(
      () => loadConfig(path.join(dir, 'a.yaml'), ENV_ONLY),
      /env\.extract\.pattern: extract mode regex needs a pattern/,
    );
    assert.throws(
      () => loadConfig(path.join(dir, 'b.yaml'), ENV_ONLY),
      /b\.yaml: env\.scorer\.pattern: pattern and flags must form a valid regular expression/,
    );
  });
});
