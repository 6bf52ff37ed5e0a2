/**
 * Each benchmark trains end to end on its fixture data: the real engine and env, the offline
 * simulated optimizer (`sim` backend), and a scripted target that answers some items right.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/engine/run.ts';
import { materialize } from '../../src/envs/materialize.ts';
import '../../src/envs/materializers.ts';
import type { ChatRequest } from '../../src/model/types.ts';
import { unitHash } from '../../src/util/random.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { lastUserText, ScriptedModel, type Reply } from './scripted.ts';

const FIX = path.join(ROOT, 'test/fixtures');
const readJson = (f: string) => JSON.parse(fs.readFileSync(f, 'utf8'));

/** Right on about two thirds of the questions (a fixed choice per question). */
const knows = (question: string) => unitHash('e2e', question) < 0.67;

const responders: Record<string, (answers: Map<string, string>) => (req: ChatRequest) => Reply> = {
  searchqa: (answers) => (req) => {
    const q = /## Question\n(.*)$/.exec(lastUserText(req))![1]!;
    return `<answer>${knows(q) ? answers.get(q) : 'no idea'}</answer>`;
  },
  livemathematicianbench: (answers) => (req) => {
    const text = lastUserText(req);
    const q = /## Question\n(.*)/.exec(text)![1]!;
    const right = answers.get(q)!;
    const line = text.split('\n').find((l) => /^[A-G]\. /.test(l) && l.slice(3) === right)!;
    return `<answer>${knows(q) ? line[0] : line[0] === 'A' ? 'B' : 'A'}</answer>`;
  },
  docvqa: (answers) => (req) => {
    const q = lastUserText(req).split('\n')[0]!;
    return `<answer>${knows(q) ? answers.get(q) : 'unreadable'}</answer>`;
  },
  officeqa: (answers) => (req) => {
    const q = /## Question\n(.*)/.exec(lastUserText(req))![1]!;
    const file = /## Candidate Files\n- (\S+)/.exec(lastUserText(req))![1]!;
    if (!req.messages.some((m) => m.role === 'tool')) return { text: '', toolCalls: [{ id: 'g1', name: 'grep', input: { pattern: 'Table', path: file } }] };
    return `<answer>${knows(q) ? answers.get(q) : '0'}</answer>`;
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
  for (const bench of ['searchqa', 'livemathematicianbench', 'docvqa', 'officeqa']) {
    it(bench, async () => {
      const dir = tmpDir();
      const splits = path.join(dir, 'splits');
      const raw = path.join(FIX, bench, bench === 'officeqa' ? 'raw/officeqa_full.csv' : 'raw');
      await materialize({ benchmark: bench, raw, manifest: path.join(FIX, bench, 'manifest'), out: splits });
      writeFiles(dir, {
        'c.yaml': [
          `_base_: ${path.join(ROOT, 'configs', bench, 'default.yaml')}`,
          'model:\n  backend: sim\n  reasoning_effort: ""',
          'train:\n  num_epochs: 2\n  batch_size: 2\n  train_size: 0',
          'gradient:\n  minibatch_size: 2\n  merge_batch_size: 2\n  analyst_workers: 2',
          'optimizer:\n  learning_rate: 2\n  min_learning_rate: 1\n  slow_update_samples: 2',
          `env:\n  split_dir: ${splits}\n  skill_init: ${path.join(ROOT, 'configs', bench, 'seed_skill.md')}\n  workers: 4${bench === 'officeqa' ? `\n  data_dirs: [${path.join(FIX, 'officeqa/docs')}]\n  max_tool_turns: 3` : ''}`,
        ].join('\n'),
      });
      const loaded = loadConfig(path.join(dir, 'c.yaml'), { environment: {} });
      const target = new ScriptedModel(`fake:${bench}-target`, responders[bench]!(answerBook(bench, splits)));
      const out = path.join(dir, 'run');
      const outcome = await runTraining({ loaded, outRoot: out, configFile: path.join(dir, 'c.yaml'), console: false, models: { target } });
      assert.equal(outcome.status, 'finished');
      const history = readJson(path.join(out, 'history.json'));
      assert.ok(history.length >= 2, 'at least one step per epoch');
      const summary = readJson(path.join(out, 'summary.json'));
      assert.equal(typeof summary.test_hard, 'number');
      assert.ok(summary.baseline_test_hard > 0 && summary.baseline_test_hard < 1, `a mixed baseline (${summary.baseline_test_hard})`);
      assert.ok(fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8').length > 0);
      // The target saw the benchmark's prompt with the skill in it; the results carry the env's scores.
      assert.ok(target.requests.every((r) => r.purpose === 'rollout'));
      assert.ok(target.requests.some((r) => r.system!.includes('## Skill')));
      const results = fs.readFileSync(path.join(out, 'test_eval_baseline', 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      assert.equal(results.length, readJson(path.join(splits, 'test', 'items.json')).length);
      assert.ok(results.every((r) => !r.error), JSON.stringify(results.find((r) => r.error)));
      assert.ok(results.some((r) => r.hard === 1) && results.some((r) => r.hard === 0));
      const calls = fs.readFileSync(path.join(out, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      assert.ok(calls.some((c) => c.purpose === 'analyst'), 'the optimizer reflected on the rollouts');
    });
  }
});
