import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.ts';
import type { AlfworldEnv } from '../../src/envs/alfworld/env.ts';
import { parseReply, stepPrompt, taskTypeOf } from '../../src/envs/alfworld/episode.ts';
import { GameProcess } from '../../src/envs/alfworld/game.ts';
import { pythonEnvironment } from '../../src/envs/python.ts';
import { createEnv } from '../../src/envs/build.ts';
import type { Item } from '../../src/envs/types.ts';
import { UserError } from '../../src/errors.ts';
import { HOUSEHOLD, writeGame, writeManifest, type Game } from '../helpers/alfworld-games.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { lastUserText, ScriptedAgent, ScriptedModel } from './scripted.ts';

const BRIDGE = path.join(ROOT, 'src/envs/alfworld/bridge.py');
const STUB = path.join(ROOT, 'test/fixtures/alfworld-stub');

const KITCHEN: Game = {
  taskType: 'pick_heat_then_place_in_recep',
  task: 'heat some egg and put it in countertop.',
  goal: { kind: 'heat', object: 'egg', target: 'countertop' },
  receptacles: [
    { name: 'countertop 1', objects: ['knife 1'] },
    { name: 'fridge 1', closed: true, objects: ['egg 1'] },
    { name: 'microwave 1' },
    { name: 'sinkbasin 1' },
  ],
};
const SOLVE_KITCHEN = [
  'go to fridge 1',
  'open fridge 1',
  'take egg 1 from fridge 1',
  'go to microwave 1',
  'heat egg 1 with microwave 1',
  'go to countertop 1',
  'move egg 1 to countertop 1',
];

/** A data folder with games and the original's path manifest over them. */
function dataFolder(games: Record<string, Game>): { data: string; manifest: string; rel: Record<string, string> } {
  const dir = tmpDir('skillopt-alfworld-');
  const data = path.join(dir, 'alfworld_data');
  const rel: Record<string, string> = {};
  for (const [name, game] of Object.entries(games))
    rel[name] = writeGame(
      data,
      name.startsWith('test') ? 'valid_unseen' : name.startsWith('val') ? 'valid_seen' : 'train',
      name,
      game,
    );
  const manifest = path.join(dir, 'alfworld_path_split');
  const items = (prefix: string, split: string) =>
    Object.keys(games)
      .filter((n) => n.startsWith(prefix))
      .map((n, i) => ({
        id: `${split}:${String(i).padStart(4, '0')}`,
        gamefile: rel[n]!,
        task_type: games[n]!.taskType,
      }));
  writeManifest(manifest, { train: items('train', 'train'), val: items('val', 'val'), test: items('test', 'test') });
  return { data, manifest, rel };
}

function envFor(splitDir: string, env: Record<string, unknown>): AlfworldEnv {
  const dir = tmpDir();
  writeFiles(dir, {
    'c.yaml': stringify({ env: { name: 'alfworld', split_dir: splitDir, world: HOUSEHOLD, ...env } }),
  });
  return createEnv(loadConfig(path.join(dir, 'c.yaml'), { environment: {} })) as AlfworldEnv;
}

const reply = (action: string) => `<think>Next: ${action}.</think>\n<action>${action}</action>`;
const steps = (t: { conversation?: unknown[] }) =>
  t.conversation as { step: number; action: string; env_feedback: string; reasoning: string }[];

describe('ALFWorld items', () => {
  it("the original's path manifest: game files relative to the data folder (env.data_root, else $ALFWORLD_DATA); task types from the path; a missing game is left out with what to do", async () => {
    const { data, manifest } = dataFolder({
      train1: KITCHEN,
      val1: { ...KITCHEN, taskType: 'pick_and_place_simple' },
      test1: { ...KITCHEN, taskType: 'look_at_obj_in_light' },
    });
    const splits = await envFor(manifest, { data_root: data }).load();
    assert.deepEqual(
      [splits.train, splits.val, splits.test].map((s) => s.map((i) => [i.id, i.type])),
      [
        [['train:0000', 'pick_heat_then_place_in_recep']],
        [['val:0000', 'pick_and_place']],
        [['test:0000', 'look_at_obj_in_light']],
      ],
    );
    assert.ok(fs.existsSync(String(splits.train[0]!.gamefile)));
    process.env.ALFWORLD_DATA = data;
    try {
      assert.equal(
        (await envFor(manifest, {}).load()).test[0]!.gamefile,
        splits.test[0]!.gamefile,
        '$ALFWORLD_DATA when env.data_root is not set',
      );
    } finally {
      delete process.env.ALFWORLD_DATA;
    }
    fs.rmSync(path.dirname(String(splits.val[0]!.gamefile)), { recursive: true });
    await assert.rejects(
      envFor(manifest, { data_root: data }).load(),
      /split 'val' has no item left .*val:0000 \(game file not found: .*valid_seen\/pick_and_place_simple-Egg-None-Countertop-val1/,
    );
    assert.deepEqual(
      [
        'pick_two_obj_and_place-CD-None-Shelf-1',
        'pick_cool_then_place_in_recep-X',
        'pick_clean_then_place_in_recep-X',
        'something_else',
      ].map(taskTypeOf),
      ['pick_two_obj_and_place', 'pick_cool_then_place_in_recep', 'pick_clean_then_place_in_recep', 'other'],
    );
  });

  it("without a world of one's own, ALFWorld's Python package is required before anything runs, with how to install it", async () => {
    const { data, manifest } = dataFolder({ train1: KITCHEN, val1: KITCHEN, test1: KITCHEN });
    await assert.rejects(
      envFor(manifest, { data_root: data, world: '', python: '/usr/bin/python3' }).load(),
      (e: Error) => {
        assert.ok(e instanceof UserError);
        assert.match(
          e.message,
          /ALFWorld needs Python 3 with alfworld; env\.python names \/usr\/bin\/python3 \(.*: no alfworld\)\. Install ALFWorld's Python package \(pip install alfworld/,
        );
        assert.match(e.message, /alfworld-download/);
        return true;
      },
    );
  });
});

describe('the bridge and the scripted household', () => {
  it('plays a game over JSON lines: the first observation and the actions on offer, then each action', async () => {
    const { data, rel } = dataFolder({ train1: KITCHEN });
    const game = await GameProcess.start(
      { command: 'python3', args: [BRIDGE, '--world', HOUSEHOLD], env: pythonEnvironment(), cwd: data },
      30_000,
    );
    try {
      const first = await game.reset(path.join(data, rel.train1!), 7, 30_000);
      assert.equal(
        first.observation,
        '-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, you see a countertop 1, a fridge 1, a microwave 1, and a sinkbasin 1.\n\nYour task is to: heat some egg and put it in countertop.',
      );
      assert.deepEqual(first.admissible, [
        'go to countertop 1',
        'go to fridge 1',
        'go to microwave 1',
        'go to sinkbasin 1',
        'inventory',
        'look',
        'help',
      ]);
      assert.deepEqual(await game.step('take egg 1 from fridge 1', 30_000), {
        observation: 'Nothing happens.',
        admissible: first.admissible,
        done: false,
        won: false,
      });
      const seen: string[] = [];
      let last;
      for (const action of SOLVE_KITCHEN) seen.push((last = await game.step(action, 30_000)).observation);
      assert.deepEqual(seen.slice(0, 3), [
        'You arrive at fridge 1. The fridge 1 is closed.',
        'You open the fridge 1. The fridge 1 is open. In it, you see a egg 1.',
        'You pick up the egg 1 from the fridge 1.',
      ]);
      assert.deepEqual([last!.done, last!.won], [true, true]);
    } finally {
      game.close();
    }
  });

  it("ALFWorld's AlfredTWEnv path: one game per process, the data paths at the game's own folder, batch shapes unpacked, the game's prints kept off the protocol", async () => {
    const dir = tmpDir('skillopt-alfred-');
    writeFiles(dir, {
      'logic/alfred.pddl': '(define (domain alfred))',
      'logic/alfred.twl2': 'grammar',
      'json_2.1.1/valid_unseen/pick_and_place_simple-Apple-None-CounterTop-1/trial_T1/traj_data.json': '{}',
      'json_2.1.1/valid_unseen/pick_and_place_simple-Apple-None-CounterTop-1/trial_T1/game.tw-pddl':
        '{"solvable": true}',
      'json_2.1.1/valid_unseen/pick_and_place_simple-Apple-None-CounterTop-2/trial_T2/traj_data.json': '{}',
    });
    const gamefile = path.join(
      dir,
      'json_2.1.1/valid_unseen/pick_and_place_simple-Apple-None-CounterTop-1/trial_T1/game.tw-pddl',
    );
    const recordFile = path.join(dir, 'record.json');
    const env = {
      ...pythonEnvironment(),
      PYTHONPATH: STUB,
      ALFWORLD_DATA: dir,
      STUB_RECORD: recordFile,
      SKILLOPT_ALFWORLD_MAX_STEPS: '9',
    };
    const game = await GameProcess.start({ command: 'python3', args: [BRIDGE], env, cwd: dir }, 30_000);
    try {
      const first = await game.reset(gamefile, 42, 30_000);
      assert.match(first.observation, /Your task is to: put some apple on countertop\.$/);
      assert.deepEqual(first.admissible, ['go to countertop 1', 'go to fridge 1', 'inventory', 'look', 'help']);
      assert.equal((await game.step('go to countertop 1', 30_000)).won, false);
      assert.deepEqual(await game.step('take apple 1 from countertop 1', 30_000), {
        observation: 'You pick up the apple 1 from the countertop 1.',
        admissible: ['go to fridge 1', 'move apple 1 to countertop 1', 'inventory', 'look', 'help'],
        done: true,
        won: true,
      });
    } finally {
      game.close();
    }
    const seen = JSON.parse(fs.readFileSync(recordFile, 'utf8'));
    assert.deepEqual(seen, {
      train_eval: 'eval_out_of_distribution',
      scanned_root: path.dirname(gamefile),
      scanned: [gamefile],
      regen_game_files: false,
      batch_size: 1,
      game_files: [gamefile],
      max_steps: 9,
      expert_type: 'handcoded',
      seed: 42,
    });
  });
});

describe('ALFWorld episodes', () => {
  let data: string;
  let manifest: string;
  let items: Record<string, Item>;
  const pidFile = path.join(tmpDir(), 'child.pid');
  const hungPidFile = path.join(tmpDir(), 'hung-child.pid');
  before(async () => {
    ({ data, manifest } = dataFolder({
      train1: KITCHEN,
      train2: {
        ...KITCHEN,
        task: 'heat some bread and put it in countertop.',
        fault: { crash_at_step: 2, child_pid_file: pidFile },
      },
      train3: {
        ...KITCHEN,
        task: 'heat some cup and put it in countertop.',
        fault: { hang_at_step: 2, child_pid_file: hungPidFile },
      },
      val1: {
        ...KITCHEN,
        task: 'heat some pie and put it in countertop.',
        fault: { fail_reset: 'the game file is damaged' },
      },
      test1: KITCHEN,
    }));
    const splits = await envFor(manifest, { data_root: data }).load();
    items = Object.fromEntries([...splits.train, ...splits.val, ...splits.test].map((i) => [i.id, i]));
  });
  after(() => {
    for (const file of [pidFile, hungPidFile]) {
      if (!fs.existsSync(file)) continue;
      try {
        process.kill(Number(fs.readFileSync(file, 'utf8')), 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
  });

  it('the prompts: the first step shows the observation and the actions on offer; later steps the task, the step count and the last two observation/action pairs', async () => {
    const env = envFor(manifest, { data_root: data, max_steps: 10 });
    const target = new ScriptedModel('t', (_req, n) => reply(SOLVE_KITCHEN[n] ?? 'look'));
    const t = await env.rollout(items['train:0000']!, '# Household\nOpen things.', { target, seed: 3 });
    assert.deepEqual(
      [t.hard, t.soft, t.taskType, t.task, t.failReason],
      [1, 1, 'pick_heat_then_place_in_recep', 'heat some egg and put it in countertop.', undefined],
    );
    assert.equal(target.requests.length, 7);
    const first = lastUserText(target.requests[0]!);
    assert.match(
      first,
      /^Your current observation: -= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room\./,
    );
    assert.match(
      first,
      /The actions you can take now: \['go to countertop 1'\n 'go to fridge 1'\n 'go to microwave 1'\n 'go to sinkbasin 1'\n 'inventory'\n 'look'\]\./,
    );
    assert.doesNotMatch(first, /'help'|You have taken/);
    const third = lastUserText(target.requests[3]!);
    assert.match(
      third,
      /^Your task is to: heat some egg and put it in countertop\.\nYou have taken 3 step\(s\) so far\. The last 2 observation\(s\) and the action you took after each:\n\[Observation 2: 'You arrive at fridge 1\. The fridge 1 is closed\.', Action 2: 'open fridge 1'\]\n\[Observation 3: 'You open the fridge 1\. The fridge 1 is open\. In it, you see a egg 1\.', Action 3: 'take egg 1 from fridge 1'\]\nThis is step 4\. Your current observation: You pick up the egg 1 from the fridge 1\./,
    );
    assert.match(target.requests[0]!.system!, /## Skill\n\n# Household\nOpen things\./);
    assert.equal(target.requests[0]!.skill, '# Household\nOpen things.');
    assert.deepEqual(steps(t)[4], {
      step: 4,
      action: 'heat egg 1 with microwave 1',
      env_feedback: 'You heat the egg 1 using the microwave 1.',
      reasoning: 'Next: heat egg 1 with microwave 1.',
    });
  });

  it("an agent target: the skill goes apart at every step, and each step's trace is kept in the trajectory", async () => {
    const env = envFor(manifest, { data_root: data, max_steps: 10 });
    const trace = (n: number) => ({
      agent: 'codex',
      steps: [{ tool: 'shell', input: `echo step ${n}`, ok: true }],
      files: [],
      errors: [],
      durationMs: 1,
      exitCode: 0,
    });
    const target = new ScriptedAgent('codex_exec:test', (_req, n) => ({
      text: reply(SOLVE_KITCHEN[n] ?? 'look'),
      trace: trace(n),
    }));
    const t = await env.rollout(items['train:0000']!, '# Household\nOpen things.', { target, seed: 3 });
    assert.equal(t.hard, 1);
    assert.ok(target.requests.every((r) => r.skill === '# Household\nOpen things.'));
    assert.deepEqual(
      t.traces,
      SOLVE_KITCHEN.map((_, n) => trace(n)),
    );
  });

  it("a reply without an action sends 'look'; the episode stops at max_steps and fails", async () => {
    const env = envFor(manifest, { data_root: data, max_steps: 4 });
    const replies = [
      'I will think about it.',
      '',
      '<think>x</think><action>GO TO Fridge 1</action>',
      '<action>open fridge 1</action>',
    ];
    const target = new ScriptedModel('t', (_req, n) => replies[n]!);
    const t = await env.rollout(items['test:0000']!, '', { target, seed: 1 });
    assert.deepEqual([t.hard, t.soft, t.failReason], [0, 0, 'Timeout after 4 steps']);
    assert.deepEqual(
      steps(t).map((s) => s.action),
      ['look', 'look', 'go to fridge 1', 'open fridge 1'],
    );
    assert.deepEqual(
      steps(t).map((s) => s.reasoning),
      ['I will think about it.', '(empty reply)', 'x', '<action>open fridge 1</action>'],
    );
    assert.match(
      t.feedback!,
      /the task was not done within 4 steps\n2 replies named no <action>; 'look' was sent instead\n3 replies did not follow the <think>\/<action> format/,
    );
    assert.equal(target.requests.length, 4);
  });

  it('a game that crashes, hangs or fails to load is an infrastructure error of that item, and its process group is killed', async () => {
    const target = () => new ScriptedModel('t', (_req, n) => reply(SOLVE_KITCHEN[n] ?? 'look'));
    const env = envFor(manifest, { data_root: data, step_timeout: 1 });
    const crashed = await env.rollout(items['train:0001']!, '', { target: target(), seed: 1 });
    assert.equal(crashed.error?.kind, 'game_process');
    assert.match(crashed.error!.message, /train2.*game\.json: the game process exited with code 3/);
    assert.equal(steps(crashed).length, 1, 'the steps played before the crash are kept');
    const child = Number(fs.readFileSync(pidFile, 'utf8'));
    assert.equal(await ended(child), true, "the game's own process went with it");
    const hung = await env.rollout(items['train:0002']!, '', { target: target(), seed: 1 });
    assert.match(
      hung.error!.message,
      /the game process gave no answer to the action 'open fridge 1' in 1 s and was killed/,
    );
    assert.equal(
      await ended(Number(fs.readFileSync(hungPidFile, 'utf8'))),
      true,
      'the hung game was killed with its process group',
    );
    const broken = await env.rollout(items['val:0000']!, '', { target: target(), seed: 1 });
    assert.match(broken.error!.message, /the game reported an error to reset: RuntimeError: the game file is damaged/);
  });

  it('a game stopped because the run is ending is an infrastructure error too, never a failed task', async () => {
    const stop = new AbortController();
    stop.abort();
    const t = await envFor(manifest, { data_root: data }).rollout(items['test:0000']!, '', {
      target: new ScriptedModel('t', () => reply('look')),
      seed: 1,
      signal: stop.signal,
    });
    assert.equal(t.error?.kind, 'game_process');
    assert.match(t.error!.message, /the game was stopped: the run is ending/);
  });

  it('the reply is read as the original reads it', () => {
    assert.deepEqual(parseReply('<think>a</think><action>Go To Desk 1</action>'), {
      action: 'go to desk 1',
      think: 'a',
      wellFormed: true,
    });
    assert.deepEqual(parseReply('<action>look</action>'), { action: 'look', wellFormed: false });
    assert.deepEqual(parseReply('<think>去</think><action>look</action>'), {
      action: 'look',
      think: '去',
      wellFormed: false,
    });
    assert.deepEqual(parseReply('nothing'), { wellFormed: false });
    assert.match(
      stepPrompt({ task: 't', history: [], observation: 'o', admissible: ['a', 'help'], historyLength: 2 }),
      /^Your current observation: o\nThe actions you can take now: \['a'\]\./,
    );
  });
});

/** Whether a process has ended (gone, or a zombie waiting to be collected), given a few seconds for the kill to land. */
async function ended(pid: number): Promise<boolean> {
  const state = () =>
    fs.existsSync(`/proc/${pid}/stat`) ? fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] : 'gone';
  for (let i = 0; i < 100; i++) {
    if (['gone', 'Z', 'X'].includes(state()!)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}
