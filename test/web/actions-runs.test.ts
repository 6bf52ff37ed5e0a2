/**
 * The dashboard acting on real runs: stopping a run it did not start (a `skillopt train` in a
 * terminal) through its lock, as Ctrl-C would; and resuming a run that a budget stopped, with
 * the limit raised, as an ordinary `skillopt train --resume` process.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/app/train.ts';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { BIN, ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { SIM_CONFIG } from '../helpers/train.ts';
import { actionCaller } from './helpers.ts';

const SMALL = ['env.n_train=8', 'env.n_val=6', 'env.n_test=6', 'train.batch_size=4', 'train.num_epochs=2'];

/** Polls `probe` until it returns something, for at most `ms`. */
async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the dashboard on real runs', () => {
  const runs = fs.realpathSync(tmpDir('skillopt-actions-runs-'));
  let dash: RunningDashboard;
  const call = actionCaller(() => dash);
  const status = async (id: string) =>
    (await call('GET', `/api/run?run=${encodeURIComponent(id)}`)).body.status as string;

  before(async () => {
    dash = await startDashboard({
      roots: [runs],
      host: '127.0.0.1',
      port: 0,
      configRoots: [path.join(ROOT, 'configs')],
      program: 'skillopt',
    });
  });
  after(() => dash?.close());

  it('stops a run started in a terminal at a safe point, as Ctrl-C does, and offers the command that resumes it', async () => {
    const dir = path.join(runs, 'terminal');
    const child = spawn(
      process.execPath,
      [
        BIN,
        'train',
        '--config',
        'configs/sim/default.yaml',
        '--out',
        dir,
        ...[...SMALL, 'model.target.options.latency_ms=200'].flatMap((o) => ['--set', o]),
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await until(
        async () =>
          fs.existsSync(dir) && (await call('GET', '/api/action/run?run=0/terminal')).body.running ? true : undefined,
        'the run to hold its lock',
      );
      const stop = await call('POST', '/api/action/stop', { run: '0/terminal' });
      assert.equal(stop.status, 200, JSON.stringify(stop.body));
      assert.equal(stop.body.pid, child.pid, 'the signal went to the process named by the lock');
      assert.equal(await exited, 130, output);
      assert.match(output, /SIGINT: stopping: no new model call starts/);
      assert.equal(await status('0/terminal'), 'stopped');
      const info = (await call('GET', '/api/action/run?run=0/terminal')).body;
      assert.deepEqual([info.running, info.canResume, info.budgetStop], [false, true, undefined]);
      // The command the run itself printed to resume it, in the dashboard's name for the program
      // (`skillopt` here; the run, started from the checkout, says `node bin/skillopt.js`).
      assert.equal(
        info.resumeCommand,
        /To resume: (.*)/.exec(output)?.[1]?.replace(/^node bin\/skillopt\.js /, 'skillopt '),
      );
      const again = await call('POST', '/api/action/stop', { run: '0/terminal' });
      assert.equal(again.status, 409);
      assert.match(again.body.error, /not running/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('resumes a run that a budget stopped, with the limit raised, and it finishes', async () => {
    const dir = path.join(runs, 'budget');
    const overrides = [...SMALL, 'budget.max_calls=40'];
    const loaded = loadConfig(SIM_CONFIG, { overrides, environment: {} });
    const outcome = await runTraining({
      loaded,
      outRoot: dir,
      configFile: SIM_CONFIG,
      console: false,
      invocation: { program: 'skillopt', config: SIM_CONFIG, overrides },
    });
    assert.equal(outcome.status, 'stopped');
    const info = (await call('GET', '/api/action/run?run=0/budget')).body;
    assert.deepEqual([info.running, info.canResume], [false, true]);
    assert.deepEqual(info.budgetStop, { key: 'budget.max_calls', limit: 40 });
    assert.equal(info.budget.max_calls, 40);

    for (const [budget, why] of [
      [{ max_calls: -1 }, /budget\.max_calls: Too small/],
      [{ max_calls: 1.5 }, /budget\.max_calls: .*int/i],
      [
        { max_dollars: 5 },
        /budget\.max_dollars: not a budget limit \(they are max_usd, max_tokens, max_calls, max_minutes\)/,
      ],
    ] as const) {
      const res = await call('POST', '/api/action/resume', { run: '0/budget', budget });
      assert.equal(res.status, 400, JSON.stringify(budget));
      assert.match(res.body.error, why);
    }
    assert.deepEqual(dash.jobs!.list(), [], 'a refused resume starts nothing');

    // Its best skill so far is evaluated; meanwhile the run is not resumed (both would write in its directory).
    const evaluation = (await call('POST', '/api/action/eval', { run: '0/budget', split: 'val' })).body.job;
    assert.match(
      evaluation.command,
      /^skillopt eval --config configs\/sim\/default\.yaml --set env\.n_train=8 .* --skill \S+\/budget\/best_skill\.md --split val --repeats 1 --out \S+\/budget\/evals\/\d{8}_\d{6}_val$/,
    );
    const during = await call('POST', '/api/action/resume', { run: '0/budget' });
    assert.equal(during.status, 409);
    assert.match(during.body.error, /an evaluation of this run is running/);
    assert.equal((await call('GET', '/api/action/run?run=0/budget')).body.canResume, false);
    const evaluated = await until(() => {
      const j = dash.jobs!.get(evaluation.id)!;
      return j.state === 'exited' ? j : undefined;
    }, 'the evaluation to end');
    assert.equal(evaluated.exitCode, 0, evaluated.output);
    const { evals } = (await call('GET', '/api/evals?run=0/budget')).body;
    assert.equal(evals.length, 1);
    assert.deepEqual(
      [evals[0].summary.split, evals[0].summary.cells[0].skill_label, evals[0].summary.cells[0].n_items],
      ['val', 'best_skill', 6],
    );

    const { body } = await call('POST', '/api/action/resume', { run: '0/budget', budget: { max_calls: 100000 } });
    const job = body.job;
    assert.equal(job.kind, 'resume');
    assert.match(
      job.command,
      /^skillopt train --config configs\/sim\/default\.yaml --resume \S+\/budget --set env\.n_train=8 .* --set budget\.max_calls=100000$/,
    );
    assert.ok(!job.command.includes('max_calls=40'), 'the raised limit replaces the one reached');
    const second = await call('POST', '/api/action/resume', { run: '0/budget' });
    assert.equal(second.status, 409, 'one process per run');
    const done = await until(() => {
      const j = dash.jobs!.get(job.id)!;
      return j.state === 'exited' ? j : undefined;
    }, 'the resumed run to end');
    assert.equal(done.exitCode, 0, done.output);
    assert.equal(await status('0/budget'), 'finished');
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')).config.budget.max_calls, 100000);
    const finished = await call('POST', '/api/action/resume', { run: '0/budget' });
    assert.equal(finished.status, 409);
    assert.match(finished.body.error, /a finished run is not resumed/);

    // Its best skill can be evaluated; a target is checked as the CLI checks it.
    for (const [targets, why] of [
      [['nope'], /--target nope: expected BACKEND:MODEL/],
      [['fakeprovider:m'], /--target fakeprovider:m: unknown backend 'fakeprovider'/],
    ] as const) {
      const res = await call('POST', '/api/action/eval', { run: '0/budget', targets });
      assert.equal(res.status, 400);
      assert.match(res.body.error, why);
    }
  });
});
