import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/app/train.ts';
import { BIN, ROOT, runCli, runPrinted } from '../helpers/cli.ts';
import { SIM_CONFIG, historyOf, readText, snapshot, trainSim } from '../helpers/train.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

/** The line of the output that starts (after indentation) with `prefix`, without it. */
function lineAfter(text: string, prefix: string): string {
  const line = text.split('\n').find((l) => l.trimStart().startsWith(prefix));
  assert.ok(line, `no line '${prefix}…' in:\n${text}`);
  return line.trimStart().slice(prefix.length).trim();
}

/** The real CLI in the background, with its output collected. */
function spawnTrain(args: string[]) {
  const child = spawn(process.execPath, [BIN, 'train', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => (out.stdout += d));
  child.stderr.on('data', (d) => (out.stderr += d));
  const state = { gone: false };
  child.once('exit', () => (state.gone = true));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, out, exited, gone: () => state.gone };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(10);
}

const eventsOf = (out: string) =>
  fs.existsSync(path.join(out, 'events.jsonl')) ? readText(path.join(out, 'events.jsonl')) : '';

describe('skillopt train', () => {
  it("runs the README's demo: a short summary first, readable stage lines, the improvement at the end, and no secret anywhere", () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'secret.yaml': `_base_: ${SIM_CONFIG}\nmodel:\n  judge:\n    base_url: \${DEMO_API_KEY}\n`,
    });
    const out = path.join(dir, 'run');
    const secret = 'sk-demo-0123456789';
    const r = runCli(['train', '--config', path.join(dir, 'secret.yaml'), '--out', out], {
      env: { DEMO_API_KEY: secret },
    });
    assert.equal(r.status, 0, r.stderr);

    assert.doesNotMatch(r.stdout, /resolved config|max_retries|backoff_max_s/, 'no config dump');
    const head = r.stdout.slice(0, r.stdout.indexOf('[BASELINE]'));
    assert.ok(head.split('\n').length <= 10, `a short summary:\n${head}`);
    assert.match(head, /env=sim {2}target sim:sim-1, optimizer sim:sim-1/);
    assert.match(head, /data: 60 train items, selection 30 of 30 val items, test 60 of 60 items/);
    assert.match(head, /3 epochs x 3 steps = 9 steps \(batch 20\); budget: no limit/);
    assert.match(head, new RegExp(`full config: ${path.join(out, 'config.json')}`));
    // Counts agree with their nouns; codes are explained.
    assert.doesNotMatch(r.stdout, /\b1 (groups|edits|minibatches|failure minibatches|success minibatches)\b/);
    assert.match(
      r.stdout,
      /\[2\/6 REFLECT\] \d+ failure minibatch(es)?, \d+ success minibatch(es)? \(up to 5 trajectories each; at most 4 edits per patch\)/,
    );
    assert.doesNotMatch(r.stdout, /M=\d|L=\d/);
    assert.match(
      r.stdout,
      /\[slow update, end of epoch 1\] no earlier epoch to compare with yet; an empty guidance field is added to the skill for the next epochs\n/,
    );
    assert.match(r.stdout, /\[meta skill, end of epoch 1\] nothing yet: [^(\n]*\n/);
    assert.match(
      r.stdout,
      /\[final evaluation done\] hard score on 60 test items, per task type: {2}\(\d+\.\ds\)\n {2}\[1\] initial skill/,
    );

    assert.match(r.stdout, /\[1\] initial skill\n\s+overall\s+: hard=\d+\/60=0\.\d{4}/);
    const m = r.stdout.match(/test: initial=(\d\.\d{4}) {2}best=(\d\.\d{4})/);
    assert.ok(m, 'the final line gives the test scores');
    assert.ok(Number(m![1]) < 0.4 && Number(m![2]) > 0.85, m![0]);
    assert.match(r.stdout, new RegExp(`Output saved to: ${out}`));
    // The sample the README shows is what the demo prints.
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const sample = /ends with a table like:\n\n```\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(sample, "the README's demo sample");
    for (const line of sample.trimEnd().split('\n')) assert.ok(r.stdout.includes(line), `the demo prints: ${line}`);
    assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret), 'not on the console');
    for (const f of fs.readdirSync(out, { recursive: true }) as string[]) {
      const file = path.join(out, f);
      if (fs.statSync(file).isFile()) assert.ok(!fs.readFileSync(file, 'utf8').includes(secret), `not in ${f}`);
    }
    const config = JSON.parse(fs.readFileSync(path.join(out, 'config.json'), 'utf8'));
    assert.equal(config.config.model.judge.base_url, '****');
  });

  it('a refused command prints only its error, before anything else, and leaves no directory behind', () => {
    const dir = tmpDir();
    const out = path.join(dir, 'new', 'run');
    const missing = runCli(['train', '--config', SIM_CONFIG, '--out', out, '--set', 'env.skill_init=no_such_skill.md']);
    assert.equal(missing.status, 2);
    assert.equal(missing.stdout, '');
    assert.match(missing.stderr, /^skillopt: skill file not found: .*no_such_skill\.md \(from env\.skill_init\)/);
    assert.ok(!fs.existsSync(path.join(dir, 'new')), 'no directory created');

    const typo = runCli(['train', '--config', SIM_CONFIG, '--out', out, '--set', 'train.batch_sizes=3']);
    assert.equal(typo.status, 2);
    assert.equal(typo.stdout, '');
    assert.match(typo.stderr, /^skillopt: .*train\.batch_sizes/);

    // Refused after the directory was made (the splits had to be loaded): it goes, with the parents it needed.
    const size = runCli(['train', '--config', SIM_CONFIG, '--out', out, '--set', 'train.train_size=7']);
    assert.equal(size.status, 2);
    assert.equal(size.stdout, '');
    assert.match(size.stderr, /^skillopt: train\.train_size is 7 but the train split has 60 items/);
    assert.ok(!fs.existsSync(path.join(dir, 'new')), 'no directory left behind');
  });

  it('rerunning a finished run says it is finished, with its result, and touches nothing', async () => {
    const first = await trainSim(['train.num_epochs=1']);
    const before = snapshot(first.out);
    const r = runCli(['train', '--config', SIM_CONFIG, '--out', first.out, '--set', 'train.num_epochs=1']);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /resuming/);
    const s = first.summary as Record<string, number>;
    assert.equal(lineAfter(r.stdout, 'This run is finished:'), first.out);
    assert.equal(
      lineAfter(r.stdout, `best skill from step ${s.best_step} (selection ${s.best_selection_hard!.toFixed(4)}):`),
      path.join(first.out, 'best_skill.md'),
    );
    assert.equal(
      lineAfter(r.stdout, 'test:'),
      `initial=${s.baseline_test_hard!.toFixed(4)}  best=${s.test_hard!.toFixed(4)}  final=${s.final_test_hard!.toFixed(4)}`,
    );
    assert.deepEqual(snapshot(first.out), before);
  });

  it('a command refused on an existing run (a changed setting, a missing skill file) writes nothing into it', async () => {
    const dir = tmpDir();
    fs.copyFileSync(path.join(ROOT, 'configs/sim/seed_skill.md'), path.join(dir, 'seed.md'));
    writeFiles(dir, { 'sim.yaml': `_base_: ${SIM_CONFIG}\nenv:\n  skill_init: seed.md\n` });
    const config = path.join(dir, 'sim.yaml');
    const finished = path.join(dir, 'finished');
    const stopped = path.join(dir, 'stopped');
    const train = (out: string, overrides: string[]) =>
      runTraining({
        loaded: loadConfig(config, { overrides, environment: {} }),
        outRoot: out,
        configFile: config,
        console: false,
      });
    assert.equal((await train(finished, ['train.num_epochs=1'])).status, 'finished');
    assert.equal((await train(stopped, ['budget.max_calls=100'])).status, 'stopped');
    const runs = { finished: snapshot(finished), stopped: snapshot(stopped) };

    const changed = runCli(['train', '--config', config, '--out', finished, '--set', 'train.num_epochs=2']);
    assert.equal(changed.status, 2);
    assert.match(changed.stderr, /holds a run started with a different config \(train\.num_epochs: 1 -> 2\)/);
    assert.deepEqual(snapshot(finished), runs.finished);

    fs.rmSync(path.join(dir, 'seed.md'));
    const missing = runCli(['train', '--config', config, '--out', stopped]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /skill file not found/);
    assert.deepEqual(snapshot(stopped), runs.stopped);
  });

  it('writes under outputs/<env>/<timestamp> when no --out is given (--verbose: the full config first); the budget stop prints the command that continues it', () => {
    const dir = tmpDir();
    const stopped = runCli(['train', '--config', SIM_CONFIG, '--set', 'budget.max_calls=400', '--verbose'], {
      cwd: dir,
    });
    assert.equal(stopped.status, 0, stopped.stderr);
    // --verbose: the full resolved config first.
    assert.match(
      stopped.stdout,
      /^resolved config \(.*configs\/_base_\/default\.yaml <- .*configs\/sim\/default\.yaml\):\nmodel:\n {2}backend: sim\n(.*\n)* {4}max_retries: 5\n(.*\n)*=+\n {2}skillopt train /,
    );
    const runs = fs.readdirSync(path.join(dir, 'outputs', 'sim'));
    assert.equal(runs.length, 1);
    assert.match(runs[0]!, /^\d{8}_\d{6}$/);
    const run = path.join(dir, 'outputs', 'sim', runs[0]!);
    const command = lineAfter(stopped.stdout, 'To continue with twice the limit:');
    assert.equal(
      command,
      `skillopt train --config ${SIM_CONFIG} --resume ${path.join('outputs', 'sim', runs[0]!)} --set budget.max_calls=800`,
    );

    const continued = runPrinted(command, { cwd: dir });
    assert.equal(continued.status, 0, continued.stderr);
    assert.match(continued.stdout, /resuming at step \d of 9/);
    assert.match(continued.stdout, /test: initial=/);
    assert.deepEqual(fs.readdirSync(path.join(dir, 'outputs', 'sim')), runs, 'no new run directory');

    const nothing = runCli(['train', '--config', SIM_CONFIG, '--resume'], { cwd: dir });
    assert.equal(nothing.status, 2);
    assert.match(
      nothing.stderr,
      new RegExp(
        `no unfinished run of .*configs/sim/default\\.yaml under ${path.join(dir, 'outputs')}; the latest, ${run}, is finished`,
      ),
    );
  });

  it("a run started with the original's flat flags resumes with them: the printed command is not refused as a changed config", () => {
    const dir = tmpDir();
    const stopped = runCli(
      [
        'train',
        '--config',
        SIM_CONFIG,
        '--out',
        'run',
        '--batch_size',
        '10',
        '--num_epochs',
        '1',
        '--set',
        'budget.max_calls=260',
      ],
      { cwd: dir },
    );
    assert.equal(stopped.status, 0, stopped.stderr);
    const command = lineAfter(stopped.stdout, 'To continue with twice the limit:');
    assert.match(command, /--set batch_size=10/);
    assert.match(command, /--set num_epochs=1/);
    const continued = runPrinted(command, { cwd: dir });
    assert.equal(continued.status, 0, continued.stderr);
    assert.match(continued.stdout, /test: initial=/);
  });

  it('--resume picks the latest unfinished run of the config, preferring one whose training settings match', async () => {
    const dir = tmpDir();
    const root = path.join(dir, 'outputs', 'sim');
    writeFiles(dir, { 'other.yaml': `_base_: ${SIM_CONFIG}\n` });
    const at = (run: string, seconds: number) => {
      for (const f of ['events.jsonl', 'runtime_state.json', 'config.json'])
        fs.utimesSync(path.join(root, run, f), seconds, seconds);
    };
    await trainSim(['budget.max_calls=100'], path.join(root, 'fits'));
    at('fits', 1000);
    await trainSim(['budget.max_calls=100', 'train.num_epochs=2'], path.join(root, 'other-settings'));
    at('other-settings', 2000);
    await trainSim(['train.num_epochs=1', 'evaluation.eval_test=false'], path.join(root, 'finished'));
    at('finished', 3000);
    const other = path.join(dir, 'other.yaml');
    await runTraining({
      loaded: loadConfig(other, { overrides: ['budget.max_calls=100'], environment: {} }),
      outRoot: path.join(root, 'other-config'),
      configFile: other,
      console: false,
    });
    at('other-config', 4000);

    const fits = runCli(['train', '--config', SIM_CONFIG, '--resume', '--set', 'budget.max_calls=120'], { cwd: dir });
    assert.equal(fits.status, 0, fits.stderr);
    assert.equal(lineAfter(fits.stdout, 'run directory:'), path.join(root, 'fits'));
    const latest = runCli(
      ['train', '--config', SIM_CONFIG, '--resume', '--cfg-options', 'budget.max_calls=120', 'train.num_epochs=2'],
      { cwd: dir },
    );
    assert.equal(latest.status, 0, latest.stderr);
    assert.equal(lineAfter(latest.stdout, 'run directory:'), path.join(root, 'other-settings'));
  });
});

describe('the runs root', () => {
  it('train, eval, ui and --resume share one default: a run given --out outputs/<name> is the one --resume continues', async () => {
    const dir = tmpDir();
    const named = path.join(dir, 'outputs', 'tickets');
    const stopped = await trainSim(['budget.max_calls=100'], named);
    assert.equal(stopped.outcome.status, 'stopped');
    const resumed = runCli(['train', '--config', SIM_CONFIG, '--resume', '--set', 'budget.max_calls=150'], {
      cwd: dir,
    });
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.equal(lineAfter(resumed.stdout, 'run directory:'), named);
    // The other commands name the same root in their help.
    for (const command of ['train', 'eval', 'ui']) {
      const help = runCli([command, '--help']).stdout;
      assert.match(help, /\boutputs\b/, `${command} --help names the runs root`);
    }
    assert.match(runCli(['ui', '--help']).stdout, /\(default: \["outputs"\]\)/);
  });
});

describe('Ctrl-C', () => {
  const SLOW = ['model.target.options.latency_ms=15', 'model.optimizer.options.latency_ms=15'];

  it('the first one stops at a safe point, releases the lock and prints the resume command, which ends where an uninterrupted run does', async () => {
    const reference = await trainSim();
    const out = path.join(tmpDir(), 'run');
    const run = spawnTrain(['--config', SIM_CONFIG, '--out', out, '--cfg-options', ...SLOW]);
    // Mid-step: step 1 is committed, step 2 is rolling out.
    await until(() => /"type":"stage_started","step":2,"epoch":1,"stage":"rollout"/.test(eventsOf(out)) || run.gone());
    assert.ok(!run.gone(), 'still training when interrupted');
    run.child.kill('SIGINT');
    assert.equal(await run.exited, 130, run.out.stderr);
    assert.match(run.out.stderr, /SIGINT: stopping: no new model call starts/);
    assert.match(
      run.out.stdout,
      /\[stopped: interrupted\] interrupted: the calls that finished are saved, those still out after the grace are made again on resume; the run resumes after step \d/,
    );
    assert.ok(!fs.existsSync(path.join(out, 'run.lock')), 'the lock is released');
    const runtime = JSON.parse(readText(path.join(out, 'runtime_state.json')));
    assert.equal(runtime.status, 'stopped');
    assert.ok(runtime.last_completed_step < 9);
    assert.match(eventsOf(out), /"type":"run_stopped","reason":"interrupted"/);

    const command = lineAfter(run.out.stdout, 'To resume:');
    assert.match(
      command,
      /^node bin\/skillopt\.js train --config \S+ --resume \S+ --set model\.target\.options\.latency_ms=15 --set model\.optimizer\.options\.latency_ms=15$/,
    );
    const resumed = runPrinted(command);
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.equal(historyOf(out), historyOf(reference.out));
    assert.equal(readText(path.join(out, 'best_skill.md')), readText(path.join(reference.out, 'best_skill.md')));
  });

  it('SIGTERM does the same; a second signal exits at once, without waiting for the calls in flight', async () => {
    const out = path.join(tmpDir(), 'run');
    // Calls slow enough that the stop's grace (3 s) cannot be over before the second signal.
    const run = spawnTrain(['--config', SIM_CONFIG, '--out', out, '--set', 'model.target.options.latency_ms=60000']);
    await until(() => /"stage":"baseline"/.test(eventsOf(out)) || run.gone());
    run.child.kill('SIGTERM');
    await until(() => run.out.stderr.includes('no new model call starts') || run.gone());
    assert.match(run.out.stderr, /SIGTERM: stopping: no new model call starts/);
    run.child.kill('SIGINT');
    assert.equal(await run.exited, 130);
    assert.match(run.out.stderr, /SIGINT again: exiting now/);
    assert.doesNotMatch(eventsOf(out), /run_stopped|run_failed/, 'it did not wait to stop cleanly');
  });
});
