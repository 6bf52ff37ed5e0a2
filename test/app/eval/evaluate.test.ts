import '../../../src/builtins.ts';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config/load.ts';
import { runEvaluation, targetRole } from '../../../src/app/eval/evaluate.ts';
import { InfraError, ModelConfigError, type ChatRequest } from '../../../src/model/types.ts';
import { RoleSchema } from '../../../src/config/schema.ts';
import { BIN, ROOT, runCli, runPrinted } from '../../helpers/cli.ts';
import { startFakeProvider, textOfUser } from '../../helpers/fake-provider.ts';
import { tmpDir, writeFiles } from '../../helpers/tmp.ts';
import { lastUserText, ScriptedModel } from '../../envs/scripted.ts';

/** Ten items "Echo wN" → "wN"; even N are type "even". */
function project() {
  const dir = tmpDir();
  const line = (n: number) =>
    JSON.stringify({ id: `i${n}`, input: `Echo w${n}`, answer: `w${n}`, kind: n % 2 ? 'odd' : 'even' });
  writeFiles(dir, {
    'train.jsonl': [1, 2].map((n) => line(n + 100)).join('\n'),
    'val.jsonl': [3, 4].map((n) => line(n + 100)).join('\n'),
    'test.jsonl': Array.from({ length: 10 }, (_, n) => line(n)).join('\n'),
    // Each project seals its own test figures: the tests evaluate the same skills on the same items.
    'c.yaml': `model:\n  backend: sim\nevaluation:\n  audit:\n    seal_dir: ${path.join(dir, 'seals')}\nenv:\n  name: tasks\n  train_file: train.jsonl\n  val_file: val.jsonl\n  test_file: test.jsonl\n  fields:\n    type: kind\n`,
    'helpful.md': 'Be helpful.',
    'precise.md': 'Be precise.',
  });
  return { dir, loaded: loadConfig(path.join(dir, 'c.yaml'), { environment: {} }) };
}

const word = (req: ChatRequest) => /Echo (w\d+)/.exec(lastUserText(req))![1]!;
const even = (req: ChatRequest) => Number(word(req).slice(1)) % 2 === 0;

describe('skillopt eval (library)', () => {
  it('two skills on two targets: cells, types, intervals, a paired test; infrastructure errors left out', async () => {
    const { dir, loaded } = project();
    // Follows the skill: right on every item when the skill asks for precision, else on even items.
    const follower = new ScriptedModel('fake:follower', (req) => {
      if (word(req) === 'w3' && req.system!.includes('helpful')) return new InfraError('upstream 503', 'server', 5);
      return `<answer>${req.system!.includes('precise') || even(req) ? word(req) : 'no idea'}</answer>`;
    });
    const stubborn = new ScriptedModel('fake:stubborn', (req) => `<answer>${even(req) ? word(req) : 'nope'}</answer>`);
    const out = path.join(dir, 'eval');
    const summary = await runEvaluation({
      loaded,
      outRoot: out,
      configFile: path.join(dir, 'c.yaml'),
      skillFiles: [path.join(dir, 'helpful.md'), path.join(dir, 'precise.md')],
      split: 'test',
      models: { targets: [follower, stubborn] },
      out: null,
    });
    const cell = (skill: string, target: string) =>
      summary.cells.find((c) => c.skill_label === skill && c.target === target)!;
    assert.equal(summary.cells.length, 4);
    assert.deepEqual([cell('helpful', 'fake:follower').n_items, cell('helpful', 'fake:follower').errors], [9, 1]);
    assert.ok(Math.abs(cell('helpful', 'fake:follower').hard - 5 / 9) < 1e-6);
    assert.equal(cell('precise', 'fake:follower').hard, 1);
    assert.equal(cell('helpful', 'fake:stubborn').hard, 0.5);
    assert.equal(cell('precise', 'fake:stubborn').hard, 0.5);
    assert.equal(cell('helpful', 'fake:stubborn').ci_method, 'wilson');
    const odd = cell('precise', 'fake:follower').by_type.odd!;
    assert.deepEqual([odd.n, odd.hard, odd.ci_method, odd.hard_ci95![1]], [5, 1, 'wilson', 1]);
    assert.equal(cell('helpful', 'fake:stubborn').by_type.even!.hard, 1);
    assert.equal(cell('helpful', 'fake:stubborn').by_type.odd!.hard, 0);
    // The top-level fields are the first cell's, as the original writes them.
    assert.deepEqual(
      [summary.skill, summary.split, summary.n_items, summary.hard],
      [path.join(dir, 'helpful.md'), 'test', 9, cell('helpful', 'fake:follower').hard],
    );
    const [onFollower, onStubborn] = summary.comparisons;
    assert.equal(onFollower!.hard.n, 9, 'paired on the items both scored');
    assert.deepEqual(onFollower!.hard.discordant, { baseline_only: 0, candidate_only: 4 });
    assert.equal(onFollower!.hard.p, 0.125);
    assert.equal(onStubborn!.hard.diff, 0);
    assert.equal(onStubborn!.hard.p, 1);
    const written = JSON.parse(fs.readFileSync(path.join(out, 'eval_summary.json'), 'utf8'));
    assert.deepEqual(written.cells.length, 4);
    const md = fs.readFileSync(path.join(out, 'eval_summary.md'), 'utf8');
    assert.match(md, /\| skill \| fake:follower \| fake:stubborn \|/);
    assert.match(md, /\| precise \| 1\.000 \[0\.\d+, 1\.000\] \(n=10\) \| 0\.500 \[/);
    assert.match(md, /\| fake:follower \| helpful \| precise \| 9 \| \+0\.444 .*\| 0\.125 \(McNemar exact\) \|/);
    assert.match(md, /Not scored \(infrastructure errors\): helpful on fake:follower: 1/);
    const results = fs
      .readFileSync(path.join(out, 'rollouts', 'fake_follower', 'precise', 'repeat_00', 'results.jsonl'), 'utf8')
      .trim()
      .split('\n');
    assert.equal(results.length, 10);
    assert.equal(JSON.parse(results[3]!).conversation[0].content, 'Echo w3', 'each line carries its conversation');
    // Run again into the same directory: every scored rollout is reused, only the failed one is retried.
    const calls = follower.requests.length + stubborn.requests.length;
    await runEvaluation({
      loaded,
      outRoot: out,
      configFile: path.join(dir, 'c.yaml'),
      skillFiles: [path.join(dir, 'helpful.md'), path.join(dir, 'precise.md')],
      split: 'test',
      models: { targets: [follower, stubborn] },
      out: null,
    });
    assert.equal(follower.requests.length + stubborn.requests.length, calls + 1);
  });

  it('repeats are distinct samples, averaged per item', async () => {
    const { dir, loaded } = project();
    const flaky = new ScriptedModel(
      'fake:flaky',
      (req) => `<answer>${(req.sample ?? 0) === 0 || even(req) ? word(req) : 'x'}</answer>`,
    );
    const s = await runEvaluation({
      loaded,
      outRoot: path.join(dir, 'o'),
      configFile: path.join(dir, 'c.yaml'),
      skillFiles: [path.join(dir, 'helpful.md')],
      split: 'valid_unseen',
      repeats: 3,
      models: { targets: [flaky] },
      out: null,
    });
    assert.equal(flaky.requests.length, 30);
    assert.deepEqual(new Set(flaky.requests.map((r) => r.sample)), new Set([0, 1, 2]));
    const c = s.cells[0]!;
    assert.deepEqual(c.repeat_hard, [1, 0.5, 0.5]);
    assert.ok(Math.abs(c.hard - 2 / 3) < 1e-6);
    assert.equal(c.ci_method, 't', 'per-item means are fractional');
    assert.equal(c.rollout_dirs.length, 3);
  });

  it('a judge-scored env: the judge is used and its calls are counted apart', async () => {
    const { dir } = project();
    writeFiles(dir, {
      'j.yaml':
        'model:\n  backend: sim\nenv:\n  name: tasks\n  train_file: train.jsonl\n  val_file: val.jsonl\n  test_file: test.jsonl\n  scorer:\n    type: judge\n    rubric: Repeats the word.\n',
    });
    const loaded = loadConfig(path.join(dir, 'j.yaml'), { environment: {} });
    const target = new ScriptedModel('fake:t', (req) => `<answer>${word(req)}</answer>`);
    const judge = new ScriptedModel('fake:judge', (req) =>
      lastUserText(req).includes('w1\n')
        ? '{"verdict": "incorrect", "score": 0}'
        : '{"verdict": "correct", "score": 1}',
    );
    const s = await runEvaluation({
      loaded,
      outRoot: path.join(dir, 'j'),
      configFile: path.join(dir, 'j.yaml'),
      skillFiles: [path.join(dir, 'helpful.md')],
      split: 'test',
      models: { targets: [target], judge },
      out: null,
    });
    assert.equal(judge.requests.length, 10);
    assert.equal(s.hard, 0.9);
    assert.deepEqual(Object.keys(s.usage).sort(), ['judge', 'rollout']);
    const calls = fs
      .readFileSync(path.join(dir, 'j', 'calls.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(calls.filter((c) => c.role === 'judge' && c.purpose === 'judge').length, 10);
  });

  it('bad input: split, repeats, skill file, target spec', async () => {
    const { dir, loaded } = project();
    const base = {
      loaded,
      outRoot: path.join(dir, 'o'),
      configFile: path.join(dir, 'c.yaml'),
      skillFiles: [path.join(dir, 'helpful.md')],
      out: null,
    } as const;
    const model = new ScriptedModel('m', () => 'x');
    await assert.rejects(
      runEvaluation({ ...base, split: 'dev', models: { targets: [model] } }),
      /--split dev: unknown split 'dev': expected train, val, test or all \(aliases: valid_seen, selection, valid_unseen\)/,
    );
    // A skill that is not a file is refused at once, not read until it ends.
    fs.symlinkSync('/dev/zero', path.join(dir, 'zero.md'));
    await assert.rejects(
      runEvaluation({ ...base, split: 'test', skillFiles: [path.join(dir, 'zero.md')], models: { targets: [model] } }),
      /--skill: .*zero\.md is a character device, not a file/,
    );
    await assert.rejects(
      runEvaluation({ ...base, split: 'test', repeats: 0, models: { targets: [model] } }),
      /--repeats/,
    );
    await assert.rejects(
      runEvaluation({ ...base, split: 'test', skillFiles: [path.join(dir, 'nope.md')] }),
      /skill file not found/,
    );
    const role = RoleSchema.parse({ backend: 'sim', model: 'a', base_url: 'http://127.0.0.1:1', concurrency: 3 });
    assert.deepEqual(
      [targetRole('sim:b', role).model, targetRole('sim:b', role).base_url, targetRole('sim:b', role).concurrency],
      ['b', 'http://127.0.0.1:1', 3],
    );
    assert.throws(() => targetRole('sim', role), /expected BACKEND:MODEL/);
    assert.throws(() => targetRole('nosuch:x', role), /unknown backend 'nosuch'/);
  });
});

describe('skillopt eval (CLI)', () => {
  it('the default invocation writes the original eval_summary.json fields', () => {
    const out = path.join(tmpDir(), 'e');
    const r = runCli([
      'eval',
      '--config',
      'configs/sim/default.yaml',
      '--skill',
      'configs/sim/seed_skill.md',
      '--out',
      out,
      '--set',
      'env.n_test=12',
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /seed_skill on sim:\S+: Results: hard=\d\.\d{4} soft=\d\.\d{4} {2}\(n=12\)/);
    const s = JSON.parse(fs.readFileSync(path.join(out, 'eval_summary.json'), 'utf8'));
    assert.equal(s.skill, path.join(ROOT, 'configs/sim/seed_skill.md'));
    assert.equal(s.split, 'test');
    assert.equal(s.n_items, 12);
    assert.equal(typeof s.hard, 'number');
    assert.equal(typeof s.soft, 'number');
  });

  it('across two targets and with a second skill', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'better.md': 'Write dates as YYYY-MM-DD.\nUse two decimals.\nAnswer in lower case.\n' });
    const out = path.join(dir, 'e');
    const r = runCli([
      'eval',
      '-c',
      'configs/sim/default.yaml',
      '-s',
      'configs/sim/seed_skill.md',
      '-s',
      path.join(dir, 'better.md'),
      '-t',
      'sim:target-a',
      '-t',
      'sim:target-b',
      '--split',
      'val',
      '--out',
      out,
      '--set',
      'env.n_val=10',
    ]);
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(fs.readFileSync(path.join(out, 'eval_summary.json'), 'utf8'));
    assert.deepEqual(
      s.cells.map((c: { target: string; skill_label: string }) => `${c.target}/${c.skill_label}`),
      ['sim:target-a/seed_skill', 'sim:target-a/better', 'sim:target-b/seed_skill', 'sim:target-b/better'],
    );
    assert.equal(s.comparisons.length, 2);
    assert.match(
      fs.readFileSync(path.join(out, 'eval_summary.md'), 'utf8'),
      /\| skill \| sim:target-a \| sim:target-b \|/,
    );
  });
});

/** A stream that says it is a terminal, collecting what is drawn on it. */
function terminal() {
  const stream = {
    text: '',
    write(t: string) {
      stream.text += t;
      return true;
    },
    isTTY: true,
    columns: 100,
    cursorTo: () => true,
    clearLine: () => true,
    moveCursor: () => true,
    on: () => stream,
    removeListener: () => stream,
  };
  return stream;
}

describe('skillopt eval: progress and Ctrl-C', () => {
  it('shows the progress of each skill and target on a terminal, as training does', async () => {
    const { dir, loaded } = project();
    const tty = terminal();
    await runEvaluation({
      loaded,
      outRoot: path.join(dir, 'eval'),
      configFile: path.join(dir, 'c.yaml'),
      skillFiles: [path.join(dir, 'helpful.md')],
      split: 'test',
      models: { targets: [new ScriptedModel('fake:echo', (req) => `<answer>${word(req)}</answer>`)] },
      out: tty as never,
    });
    assert.match(tty.text, /helpful on fake:echo \[.*\] \d+\/10/);
  });

  it('Ctrl-C stops at a safe point, says what is kept and prints the command that continues it', async () => {
    const out = path.join(tmpDir(), 'e');
    const args = [
      'eval',
      '--config',
      'configs/sim/default.yaml',
      '--skill',
      'configs/sim/seed_skill.md',
      '--out',
      out,
      '--set',
      'model.target.options.latency_ms=400',
      '--set',
      'env.workers=2',
    ];
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    // Some rollouts done (their results are in scores.jsonl), more in flight.
    const scores = path.join(out, 'scores.jsonl');
    while (!(fs.existsSync(scores) && fs.readFileSync(scores, 'utf8').split('\n').length > 3)) await sleep(20);
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.match(stderr, /SIGINT: stopping: no new model call starts/);
    assert.match(stdout + stderr, /\[stopped: interrupted\] .*rollouts? finished .* kept in /);
    const command = (stdout + stderr)
      .split('\n')
      .find((l) => l.trimStart().startsWith('To continue:'))
      ?.trimStart()
      .slice('To continue:'.length)
      .trim();
    assert.ok(command, `no command to continue in:\n${stdout}\n${stderr}`);
    assert.equal(
      command,
      `node bin/skillopt.js eval --config configs/sim/default.yaml --set model.target.options.latency_ms=400 --set env.workers=2 --skill configs/sim/seed_skill.md --split test --repeats 1 --out ${out}`,
    );
    const kept = fs.readFileSync(scores, 'utf8').trim().split('\n').length;
    const continued = runPrinted(command.replace('latency_ms=400', 'latency_ms=0'));
    assert.equal(continued.status, 0, continued.stderr);
    const s = JSON.parse(fs.readFileSync(path.join(out, 'eval_summary.json'), 'utf8'));
    assert.equal(s.n_items, 60);
    assert.equal(fs.readFileSync(scores, 'utf8').trim().split('\n').length, 60, 'the kept rollouts are not run again');
    assert.ok(kept < 60);
  });
});

describe('skillopt eval: one evaluation a directory', () => {
  it('a second evaluation into a directory another one is using is refused, writing nothing; once the first is done it runs', async () => {
    const { dir, loaded } = project();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const slow = new ScriptedModel('fake:slow', async (req) => {
      started();
      await held;
      return `<answer>${word(req)}</answer>`;
    });
    const out = path.join(dir, 'eval');
    const evaluate = (target: ScriptedModel) =>
      runEvaluation({
        loaded,
        outRoot: out,
        configFile: path.join(dir, 'c.yaml'),
        skillFiles: [path.join(dir, 'helpful.md')],
        split: 'test',
        models: { targets: [target] },
        out: null,
      });
    const first = evaluate(slow);
    await running;
    const second = new ScriptedModel('fake:slow', (req) => `<answer>${word(req)}</answer>`);
    await assert.rejects(evaluate(second), (err: Error) => {
      assert.match(err.message, new RegExp(`evaluation directory ${out} is in use by .*give this one another --out`));
      return true;
    });
    assert.equal(second.requests.length, 0, 'the refused evaluation called no model');
    release();
    assert.equal((await first).n_items, 10);
    assert.equal(fs.readFileSync(path.join(out, 'scores.jsonl'), 'utf8').trim().split('\n').length, 10);
    assert.ok(!fs.existsSync(path.join(out, 'run.lock')), 'the lock is released');
    await evaluate(second);
    assert.equal(second.requests.length, 0, 'a rerun takes up the kept rollouts');
  });
});

describe('skillopt eval: the key variable', () => {
  it('a variable named by api_key_env that is not set is said before the first call, not passed over in silence', async () => {
    const fake = await startFakeProvider({
      respond: (r) => ({ text: `<answer>${/Echo (w\d+)/.exec(textOfUser(r))?.[1]}</answer>` }),
    });
    try {
      const { dir } = project();
      const loaded = loadConfig(path.join(dir, 'c.yaml'), {
        environment: {},
        overrides: [
          'model.target.backend=openai_compatible',
          'model.target.model=m',
          `model.target.base_url=${fake.url}/v1`,
          'model.target.api_key_env=MY_SERVER_KEY',
          'cache.mode=off',
        ],
      });
      let said = '';
      const sink = {
        write: (t: string) => {
          said += t;
          return true;
        },
      };
      await runEvaluation({
        loaded,
        outRoot: path.join(dir, 'eval'),
        configFile: path.join(dir, 'c.yaml'),
        skillFiles: [path.join(dir, 'helpful.md')],
        split: 'test',
        environment: {},
        out: sink,
      });
      assert.match(
        said,
        /model\.target\.api_key_env names MY_SERVER_KEY, which is not set: calls to .* go without a key/,
      );
      assert.ok(said.indexOf('api_key_env') < said.indexOf('Results:'), 'said before the results');
      assert.equal(fake.requests.length, 10);
    } finally {
      await fake.close();
    }
  });
});

describe('skillopt eval: a broken response cache', () => {
  it('is named, with what to do, before any call', async () => {
    const fake = await startFakeProvider();
    try {
      const { dir } = project();
      const cacheFile = path.join(dir, 'garbage.sqlite');
      fs.writeFileSync(cacheFile, 'this is not a database, just text that got here '.repeat(200));
      const loaded = loadConfig(path.join(dir, 'c.yaml'), {
        environment: {},
        overrides: [
          'model.target.backend=openai_compatible',
          'model.target.model=m',
          `model.target.base_url=${fake.url}/v1`,
          `cache.path=${cacheFile}`,
        ],
      });
      await assert.rejects(
        runEvaluation({
          loaded,
          outRoot: path.join(dir, 'eval'),
          configFile: path.join(dir, 'c.yaml'),
          skillFiles: [path.join(dir, 'helpful.md')],
          split: 'test',
          environment: {},
          out: null,
        }),
        (err: Error) =>
          err instanceof ModelConfigError &&
          err.message.includes(cacheFile) &&
          /cannot be opened .*file is not a database.*move it aside/.test(err.message),
      );
      assert.equal(fake.requests.length, 0);
    } finally {
      await fake.close();
    }
  });
});
