/**
 * A night yields to training: a `skillopt train` running on the machine (the simulator, slowed
 * so that it is still running) makes a night started meanwhile skip, with a note `sleep status`
 * shows; once the run has ended, a night runs.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, ROOT, runCli } from '../helpers/cli.ts';
import { PROJECT, simNightHome } from './sim-night.ts';

async function until(probe: () => boolean, what: string, ms = 60_000): Promise<void> {
  for (const end = Date.now() + ms; !probe(); await new Promise((r) => setTimeout(r, 50)))
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
}

test('a night started while a training run goes is skipped, and says which run; status shows it', async () => {
  const { home, env, sleep } = simNightHome('mine:\n  seed: 3\n');
  const out = path.join(home, 'runs/sim-slow');
  const running = path.join(env.SKILLOPT_HOME!, 'running');
  const train = spawn(
    process.execPath,
    [
      BIN,
      'train',
      '--config',
      path.join(ROOT, 'configs/sim/default.yaml'),
      '--out',
      out,
      '--set',
      'model.target.options.latency_ms=1000',
    ],
    { cwd: home, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  train.stdout.on('data', (d) => (output += d));
  train.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => train.once('exit', resolve));
  try {
    await until(() => fs.existsSync(running) && fs.readdirSync(running).length > 0, 'the training run to mark itself');
    const night = sleep('run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'sim');
    assert.equal(night.status, 0, night.stderr);
    assert.equal(night.stdout.trim(), `night skipped, the machine is busy: a training run was going: ${out}`);
    assert.equal(fs.existsSync(path.join(home, '.skillopt-sleep/nights')), false, 'nothing ran');
    const status = sleep('status', '--project', PROJECT);
    assert.match(
      status.stdout,
      new RegExp(
        `skipped a night at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC, the machine was busy: a training run was going: ${out.replace(/[.]/g, '\\.')}`,
      ),
    );
    assert.equal(train.exitCode, null, `the run was still going:\n${output}`);
  } finally {
    train.kill('SIGINT');
    const timer = setTimeout(() => train.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
  assert.deepEqual(fs.readdirSync(running), [], 'the run removed its marker as it stopped');
  assert.equal(
    fs.existsSync(path.join(home, '.skillopt')),
    false,
    'the run and the night found each other through SKILLOPT_HOME, not the home folder',
  );
  const night = sleep('run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'sim');
  assert.equal(night.status, 0, night.stderr);
  assert.match(night.stdout, /waiting for adoption/);
});

test('training goes on when its marker cannot be written, with one warning', () => {
  const { home, env } = simNightHome('');
  fs.writeFileSync(env.SKILLOPT_HOME!, 'a file where the folder would be\n');
  const out = path.join(home, 'runs/sim');
  const run = runCli(
    [
      'train',
      '--config',
      path.join(ROOT, 'configs/sim/default.yaml'),
      '--out',
      out,
      '--set',
      'env.n_train=4',
      '--set',
      'env.n_val=2',
      '--set',
      'env.n_test=2',
      '--set',
      'train.num_epochs=1',
    ],
    { env, cwd: home },
  );
  assert.equal(run.status, 0, run.stderr);
  assert.equal(
    `${run.stdout}${run.stderr}`.match(/cannot mark this training run as running in \S+\/skillopt-home\/running/g)
      ?.length,
    1,
    run.stdout + run.stderr,
  );
  assert.equal(JSON.parse(fs.readFileSync(path.join(out, 'runtime_state.json'), 'utf8')).status, 'finished');
});
