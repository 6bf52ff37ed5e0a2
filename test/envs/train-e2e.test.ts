/**
 * Each benchmark trains end to end on its fixture data: the real engine and env, the target an
 * OpenAI-compatible model reached over HTTP on a fake server (127.0.0.1) that answers some items
 * right, and the offline simulated optimizer (`sim` backend).
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/app/train.ts';
import { materialize } from '../../src/envs/materialize.ts';
import { unitHash } from '../../src/util/random.ts';
import { ROOT } from '../helpers/cli.ts';
import { startFakeProvider, type FakeProvider, type Recorded, type Reply } from '../helpers/fake-provider.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

const FIX = path.join(ROOT, 'test/fixtures');
const readJson = (f: string) => JSON.parse(fs.readFileSync(f, 'utf8'));

/** Right on about two thirds of the questions (a fixed choice per question). */
const knows = (question: string) => unitHash('e2e', question) < 0.67;

type Message = { role: string; content: unknown };
const textOf = (content: unknown) =>
  typeof content === 'string'
    ? content
    : ((content ?? []) as { type: string; text?: string }[])
        .filter((p) => p.type === 'text')
        .map((p) => p.text)
        .join('');
const userTexts = (r: Recorded) =>
  (r.body.messages as Message[]).filter((m) => m.role === 'user').map((m) => textOf(m.content));

/** The target's answers per benchmark, given question → accepted answer. */
const responders: Record<string, (answers: Map<string, string>) => (r: Recorded) => Reply> = {
  searchqa: (answers) => (r) => {
    const q = /## Question\n(.*)$/.exec(userTexts(r)[0]!)![1]!;
    return { text: `<answer>${knows(q) ? answers.get(q) : 'no idea'}</answer>` };
  },
  livemathematicianbench: (answers) => (r) => {
    const text = userTexts(r)[0]!;
    const q = /## Question\n(.*)/.exec(text)![1]!;
    const line = text.split('\n').find((l) => /^[A-G]\. /.test(l) && l.slice(3) === answers.get(q))!;
    return { text: `<answer>${knows(q) ? line[0] : line[0] === 'A' ? 'B' : 'A'}</answer>` };
  },
  docvqa: (answers) => (r) => {
    const q = userTexts(r)[0]!.split('\n')[0]!;
    return { text: `<answer>${knows(q) ? answers.get(q) : 'unreadable'}</answer>` };
  },
  officeqa: (answers) => (r) => {
    const first = userTexts(r)[0]!;
    const q = /## Question\n(.*)/.exec(first)![1]!;
    const file = /## Candidate Files\n- (\S+)/.exec(first)![1]!;
    const toolResults = (r.body.messages as Message[]).filter((m) => m.role === 'tool');
    if (toolResults.length === 0 && r.body.tools)
      return { text: '', toolCalls: [{ id: 'g1', name: 'grep', arguments: { pattern: 'Table', path: file } }] };
    return { text: `<answer>${knows(q) ? answers.get(q) : '0'}</answer>` };
  },
};

/** Question → accepted answer, from the materialised items. */
function answerBook(bench: string, splits: string): Map<string, string> {
  const book = new Map<string, string>();
  for (const split of ['train', 'val', 'test']) {
    for (const r of readJson(path.join(splits, split, 'items.json'))) {
      if (bench === 'livemathematicianbench') book.set(r.question, r.correct_choice.text);
      else if (bench === 'officeqa') book.set(r.question, r.ground_truth);
      else book.set(r.question, r.answers[0]);
    }
  }
  return book;
}

describe('benchmarks train end to end', () => {
  let fake: FakeProvider;
  let respond: (r: Recorded) => Reply = () => ({ text: '' });
  before(async () => {
    fake = await startFakeProvider({ respond: (r) => respond(r) });
  });
  after(() => fake.close());

  for (const bench of ['searchqa', 'livemathematicianbench', 'docvqa', 'officeqa']) {
    it(bench, async () => {
      const dir = tmpDir();
      const splits = path.join(dir, 'splits');
      const raw = path.join(FIX, bench, bench === 'officeqa' ? 'raw/officeqa_full.csv' : 'raw');
      await materialize({ benchmark: bench, raw, manifest: path.join(FIX, bench, 'manifest'), out: splits });
      writeFiles(dir, {
        'c.yaml': [
          `_base_: ${path.join(ROOT, 'configs', bench, 'default.yaml')}`,
          `model:\n  target:\n    backend: openai_compatible\n    model: fake-${bench}\n    base_url: ${fake.url}/v1\n    max_retries: 0\n  optimizer:\n    backend: sim\n  reasoning_effort: ""`,
          'train:\n  num_epochs: 2\n  batch_size: 2\n  train_size: 0',
          'gradient:\n  minibatch_size: 2\n  merge_batch_size: 2\n  analyst_workers: 2',
          'optimizer:\n  learning_rate: 2\n  min_learning_rate: 1\n  slow_update_samples: 2',
          `cache:\n  mode: off`,
          `env:\n  split_dir: ${splits}\n  skill_init: ${path.join(ROOT, 'configs', bench, 'seed_skill.md')}\n  workers: 4${bench === 'officeqa' ? `\n  data_dirs: [${path.join(FIX, 'officeqa/docs')}]\n  max_tool_turns: 3` : ''}`,
        ].join('\n'),
      });
      respond = responders[bench]!(answerBook(bench, splits));
      fake.requests.length = 0;
      const loaded = loadConfig(path.join(dir, 'c.yaml'), { environment: {} });
      const out = path.join(dir, 'run');
      const outcome = await runTraining({
        loaded,
        outRoot: out,
        configFile: path.join(dir, 'c.yaml'),
        console: false,
        environment: {},
      });
      assert.equal(outcome.status, 'finished');
      assert.ok(readJson(path.join(out, 'history.json')).length >= 2, 'at least one step per epoch');
      const summary = readJson(path.join(out, 'summary.json'));
      assert.ok(
        summary.baseline_test_hard > 0 && summary.baseline_test_hard < 1,
        `a mixed baseline (${summary.baseline_test_hard})`,
      );
      assert.equal(typeof summary.test_hard, 'number');
      assert.ok(fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8').length > 0);
      // The target was asked over HTTP with the benchmark's prompt and the skill in it.
      const bodies = fake.requests.map((r) => r.body);
      assert.ok(bodies.length > 0 && bodies.every((b) => b.model === `fake-${bench}`));
      assert.ok(bodies.some((b) => textOf((b.messages as Message[])[0]!.content).includes('## Skill')));
      const results = fs
        .readFileSync(path.join(out, 'test_eval_baseline', 'results.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(results.length, readJson(path.join(splits, 'test', 'items.json')).length);
      assert.ok(
        results.every((r) => !r.error),
        JSON.stringify(results.find((r) => r.error)),
      );
      assert.ok(results.some((r) => r.hard === 1) && results.some((r) => r.hard === 0));
      const calls = fs
        .readFileSync(path.join(out, 'calls.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.ok(
        calls.some((c) => c.purpose === 'analyst'),
        'the optimizer reflected on the rollouts',
      );
      if (bench === 'docvqa') {
        const parts = bodies.flatMap((b) =>
          (b.messages as Message[]).flatMap((m) => (Array.isArray(m.content) ? m.content : [])),
        );
        assert.ok(
          parts.some(
            (p: { type: string; image_url?: { url: string } }) =>
              p.type === 'image_url' && p.image_url!.url.startsWith('data:image/png;base64,'),
          ),
          'the page image reached the wire',
        );
      }
      if (bench === 'officeqa') {
        assert.ok(
          bodies.some(
            (b) =>
              (b.tools as { function: { name: string } }[] | undefined)?.map((t) => t.function.name).join() ===
              'glob,read,grep',
          ),
        );
        const toolMessages = bodies.flatMap((b) => (b.messages as Message[]).filter((m) => m.role === 'tool'));
        assert.ok(
          toolMessages.some((m) =>
            /Table 1\.- Budget Receipts|Table 2\.- Computed Interest|Table 3\.- Internal Revenue/.test(
              textOf(m.content),
            ),
          ),
          'grep results went back to the model',
        );
      }
    });
  }
});
