/**
 * ALFWorld trains end to end on the scripted household: the original's path manifest over games
 * of our own, one bridge process per game, the real engine and env, both models on a fake
 * OpenAI-compatible server on 127.0.0.1 (household-agent.ts). The target's success depends on
 * two rules of the skill, which the optimizer proposes; the learned skill passes the test split.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/app/train.ts';
import { HOUSEHOLD, writeGame, writeManifest, type Game } from '../helpers/alfworld-games.ts';
import { ROOT } from '../helpers/cli.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { householdResponder, RULES } from './household-agent.ts';

const KITCHEN = [
  { name: 'countertop 1', objects: ['knife 1'] },
  { name: 'diningtable 1', objects: [] as string[] },
  { name: 'fridge 1', closed: true, objects: [] as string[] },
  { name: 'microwave 1' },
  { name: 'sinkbasin 1' },
  { name: 'drawer 1', closed: true, objects: [] as string[] },
  { name: 'shelf 1' },
];
const room = (where: Record<string, string[]>) =>
  KITCHEN.map((r) => ({ ...r, objects: [...(r.objects ?? []), ...(where[r.name] ?? [])] }));

const GAMES: Record<string, [split: 'train' | 'valid_seen' | 'valid_unseen', game: Game]> = {
  // train
  keys: [
    'train',
    {
      taskType: 'pick_and_place_simple',
      task: 'put some keychain in shelf.',
      goal: { kind: 'place', object: 'keychain', target: 'shelf' },
      receptacles: room({ 'drawer 1': ['keychain 1'] }),
    },
  ],
  egg: [
    'train',
    {
      taskType: 'pick_heat_then_place_in_recep',
      task: 'heat some egg and put it in diningtable.',
      goal: { kind: 'heat', object: 'egg', target: 'diningtable' },
      receptacles: room({ 'countertop 1': ['egg 1'] }),
    },
  ],
  cds: [
    'train',
    {
      taskType: 'pick_two_obj_and_place',
      task: 'find two cd and put them in shelf.',
      goal: { kind: 'two', object: 'cd', target: 'shelf' },
      receptacles: room({ 'countertop 1': ['cd 1'], 'diningtable 1': ['cd 2'] }),
    },
  ],
  // val
  potato: [
    'valid_seen',
    {
      taskType: 'pick_cool_then_place_in_recep',
      task: 'cool some potato and put it in countertop.',
      goal: { kind: 'cool', object: 'potato', target: 'countertop' },
      receptacles: room({ 'diningtable 1': ['potato 1'] }),
    },
  ],
  spoon: [
    'valid_seen',
    {
      taskType: 'pick_and_place_simple',
      task: 'put some spoon in diningtable.',
      goal: { kind: 'place', object: 'spoon', target: 'diningtable' },
      receptacles: room({ 'drawer 1': ['spoon 1'] }),
    },
  ],
  // test
  apple: [
    'valid_unseen',
    {
      taskType: 'pick_and_place_simple',
      task: 'put some apple in countertop.',
      goal: { kind: 'place', object: 'apple', target: 'countertop' },
      receptacles: room({ 'fridge 1': ['apple 1'] }),
    },
  ],
  cloth: [
    'valid_unseen',
    {
      taskType: 'pick_clean_then_place_in_recep',
      task: 'clean some cloth and put it in shelf.',
      goal: { kind: 'clean', object: 'cloth', target: 'shelf' },
      receptacles: room({ 'diningtable 1': ['cloth 1'] }),
    },
  ],
  mug: [
    'valid_unseen',
    {
      taskType: 'pick_and_place_simple',
      task: 'put some mug in shelf.',
      goal: { kind: 'place', object: 'mug', target: 'shelf' },
      receptacles: room({ 'countertop 1': ['mug 1'] }),
    },
  ],
  book: [
    'valid_unseen',
    {
      taskType: 'look_at_obj_in_light',
      task: 'look at book under the desklamp.',
      goal: { kind: 'look', object: 'book' },
      receptacles: [
        { name: 'bed 1', objects: ['book 1'] },
        { name: 'sidetable 1', objects: ['desklamp 1'] },
        { name: 'dresser 1' },
      ],
    },
  ],
};

const readJson = (f: string) => JSON.parse(fs.readFileSync(f, 'utf8'));
const readLines = (f: string) =>
  fs
    .readFileSync(f, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('ALFWorld trains end to end', () => {
  let fake: FakeProvider;
  before(async () => {
    fake = await startFakeProvider({
      respond: (r) => householdResponder(Object.values(GAMES).map(([, g]) => g))(r.body),
    });
  });
  after(() => fake.close());

  it('on the scripted household: the rules the target needs are learned, and the test split passes with them', async () => {
    const dir = tmpDir('skillopt-alfworld-train-');
    const data = path.join(dir, 'alfworld_data');
    const items = { train: [] as object[], val: [] as object[], test: [] as object[] };
    for (const [name, [split, game]] of Object.entries(GAMES)) {
      const rel = writeGame(data, split, name, game);
      const key = split === 'train' ? 'train' : split === 'valid_seen' ? 'val' : 'test';
      items[key].push({
        id: `${key}:${String(items[key].length).padStart(4, '0')}`,
        gamefile: rel,
        task_type: game.taskType,
      });
    }
    writeManifest(path.join(dir, 'alfworld_path_split'), items as never);
    writeFiles(dir, {
      'c.yaml': [
        `_base_: ${path.join(ROOT, 'configs/alfworld/default.yaml')}`,
        `model:\n  backend: openai_compatible\n  target:\n    model: fake-agent\n    base_url: ${fake.url}/v1\n    max_retries: 0\n  optimizer:\n    model: fake-optimizer\n    base_url: ${fake.url}/v1\n    max_retries: 0\n  reasoning_effort: ""`,
        'train:\n  num_epochs: 2\n  batch_size: 3\n  train_size: 0',
        'gradient:\n  minibatch_size: 3\n  merge_batch_size: 2\n  analyst_workers: 2',
        'optimizer:\n  learning_rate: 2\n  min_learning_rate: 1\n  slow_update_samples: 3',
        'cache:\n  mode: off',
        `env:\n  split_dir: ${path.join(dir, 'alfworld_path_split')}\n  data_root: ${data}\n  world: ${HOUSEHOLD}\n  skill_init: ${path.join(ROOT, 'configs/alfworld/seed_skill.md')}\n  max_steps: 12\n  workers: 4`,
      ].join('\n'),
    });
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
    const summary = readJson(path.join(out, 'summary.json'));
    assert.equal(
      summary.baseline_test_hard,
      0.5,
      'the seed skill: the open-shelf games pass, the fridge and the sink do not',
    );
    assert.equal(summary.test_hard, 1);
    const best = fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8');
    assert.ok(best.includes(RULES.open) && best.includes(RULES.change), best);

    const baseline = readLines(path.join(out, 'test_eval_baseline/results.jsonl'));
    const byType = Object.fromEntries(baseline.map((t) => [t.task_type, t]));
    assert.deepEqual(Object.keys(byType).sort(), [
      'look_at_obj_in_light',
      'pick_and_place',
      'pick_clean_then_place_in_recep',
    ]);
    const apple = baseline.find((t) => t.task === 'put some apple in countertop.')!;
    assert.equal(apple.fail_reason, 'Timeout after 12 steps');
    assert.equal(apple.conversation.length, 12, 'the whole trajectory is kept');
    const book = byType.look_at_obj_in_light;
    assert.equal(book.hard, 1);
    assert.deepEqual(
      book.conversation.map((s: { action: string }) => s.action),
      ['go to bed 1', 'take book 1 from bed 1', 'go to sidetable 1', 'use desklamp 1'],
    );
    assert.deepEqual(book.conversation[3], {
      step: 3,
      action: 'use desklamp 1',
      env_feedback: 'You turn on the desklamp 1.',
      reasoning: 'Step 4 of my plan.',
    });
    // One model call per step, the skill in the system prompt of each.
    const agentCalls = fake.requests.filter((r) => r.body.model === 'fake-agent');
    assert.ok(
      agentCalls.every(
        (r) =>
          r.body.messages.length === 2 && /## Skill\n\n# ALFWorld Household Agent/.test(r.body.messages[0].content),
      ),
    );
    const analyst = fake.requests.find((r) => r.body.response_format?.json_schema?.name === 'analyst_failure');
    assert.match(
      analyst!.body.messages.at(-1).content,
      /\[step 0 think\] Step 1 of my plan\.\n\[step 0 action\] go to /,
      'the optimizer reads each step',
    );
  });
});
