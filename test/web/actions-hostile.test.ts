/**
 * The dashboard's actions against hostile input: what the New-run page shows is what runs;
 * overrides with a NUL or of 300 KB are refused by the check; a launch never writes outside a
 * run root (through a symlinked folder) or into the root itself; a run directory is data (its
 * config and the code that config names must come from the config roots); two evaluations never
 * share a directory; a forged run lock makes the dashboard signal nothing.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { me } from '../../src/run/lock.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { trainSim } from '../helpers/train.ts';
import { actionCaller } from './helpers.ts';

const PROJECT_CONFIGS = path.join(ROOT, 'configs');
/** A config of the tasks env whose scorer is the module at `module`. */
const tasksConfig = (module: string) =>
  `model:\n  backend: sim\n  target: {backend: sim, model: sim-1}\n  optimizer: {backend: sim, model: sim-1}\nenv:\n  name: tasks\n  data_path: ${path.join(ROOT, 'examples/tasks/support_tickets.jsonl')}\n  scorer: {type: custom, module: ${module}}\n`;
const SMALL = ['env.n_train=8', 'env.n_val=6', 'env.n_test=6', 'train.batch_size=4', 'train.num_epochs=1'];

describe('the dashboard refuses hostile actions', () => {
  const runs = fs.realpathSync(tmpDir('skillopt-hostile-runs-'));
  const outside = fs.realpathSync(tmpDir('skillopt-hostile-outside-'));
  const configs = fs.realpathSync(tmpDir('skillopt-hostile-configs-'));
  let dash: RunningDashboard;
  const call = actionCaller(() => dash);

  before(async () => {
    await trainSim(SMALL, path.join(runs, 'sim', 'done'));
    dash = await startDashboard({
      roots: [runs],
      host: '127.0.0.1',
      port: 0,
      configRoots: [PROJECT_CONFIGS, configs],
      program: 'skillopt',
    });
  });
  after(async () => {
    for (const job of dash?.jobs?.list() ?? []) if (job.state === 'running') process.kill(-job.pid!, 'SIGKILL');
    await dash?.close();
  });

  it('launches the run directory the check showed, not one picked again at launch', async () => {
    const overrides = SMALL;
    const checked = await call('POST', '/api/action/check', { config: '0/sim/default.yaml', overrides });
    assert.equal(checked.status, 200);
    assert.equal(checked.body.out.root, 0);
    assert.match(checked.body.out.path, /^sim\/\d{8}_\d{6}/);
    // The timestamp of a directory picked again would be a second later.
    await new Promise((r) => setTimeout(r, 1100));
    const launched = await call('POST', '/api/action/launch', {
      config: '0/sim/default.yaml',
      overrides,
      out: checked.body.out,
    });
    assert.equal(launched.body.launched, true, JSON.stringify(launched.body));
    assert.equal(launched.body.run, checked.body.run);
    assert.equal(launched.body.job.command, checked.body.command);
    dash.jobs!.interrupt(launched.body.job.id);
  });

  it('refuses an override with a NUL byte or of 300 KB in the check, naming it', async () => {
    for (const [override, why] of [
      ['train.seed=1\u0000', /overrides\[1\]: contains the control character U\+0000/],
      [`env.task_prompt=${'x'.repeat(300_000)}`, /overrides\[1\]: 300016 characters, more than the 4096/],
    ] as const) {
      for (const action of ['check', 'launch']) {
        const res = await call('POST', `/api/action/${action}`, {
          config: '0/sim/default.yaml',
          overrides: ['train.seed=2', override],
        });
        assert.equal(res.status, 400, `${action}: ${JSON.stringify(res.body).slice(0, 200)}`);
        assert.match(res.body.error, why);
      }
    }
  });

  it('writes a new run strictly below a run root, never through a symlinked folder out of it', async () => {
    fs.mkdirSync(path.join(runs, 'team'), { recursive: true });
    fs.symlinkSync(outside, path.join(runs, 'team', 'linkrun'));
    for (const [out, status, why] of [
      [{ root: 0, path: 'team/linkrun/new' }, 403, /leads to .* which is not below the run root/],
      [{ root: 0, path: '.' }, 400, /is the run root .* itself/],
      [{ root: 0, path: './/' }, 400, /is the run root .* itself/],
    ] as const) {
      for (const action of ['check', 'launch']) {
        const res = await call('POST', `/api/action/${action}`, { config: '0/sim/default.yaml', out });
        assert.equal(res.status, status, `${action} ${out.path}: ${JSON.stringify(res.body)}`);
        assert.match(res.body.error, why);
      }
    }
    assert.deepEqual(fs.readdirSync(outside), []);
  });

  it('evaluates or resumes a run only with a config, and code, from the config roots', async () => {
    const marker = path.join(outside, 'scorer-ran');
    // A run shipped with its own config and scorer module.
    const shared = path.join(runs, 'shared', 'x');
    fs.cpSync(path.join(runs, 'sim', 'done'), shared, { recursive: true });
    writeFiles(shared, {
      'scorer.mjs': `import fs from 'node:fs';\nfs.writeFileSync(${JSON.stringify(marker)}, 'ran');\nexport default () => ({ hard: 1 });\n`,
      'cfg.yaml': tasksConfig('scorer.mjs'),
    });
    const setConfigFile = (dir: string, file: string) => {
      const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...cfg, config_file: file }));
    };
    setConfigFile(shared, path.join(shared, 'cfg.yaml'));
    // A config in a config root that names a module inside a run.
    const named = path.join(runs, 'shared', 'y');
    fs.cpSync(path.join(runs, 'sim', 'done'), named, { recursive: true });
    fs.copyFileSync(path.join(shared, 'scorer.mjs'), path.join(named, 'scorer.mjs'));
    writeFiles(configs, {
      'names-run-code.yaml': tasksConfig(path.join(named, 'scorer.mjs')),
    });
    setConfigFile(named, path.join(configs, 'names-run-code.yaml'));

    for (const [id, why] of [
      ['0/shared/x', /its config file .*cfg\.yaml is not under the dashboard's config roots/],
      [
        '0/shared/y',
        /its config's env\.scorer\.module names .*scorer\.mjs, which is not under the dashboard's config roots/,
      ],
    ] as const) {
      const ev = await call('POST', '/api/action/eval', { run: id });
      assert.equal(ev.status, 409, `${id}: ${JSON.stringify(ev.body)}`);
      assert.match(ev.body.error, why);
      const state = await call('GET', `/api/action/run?run=${encodeURIComponent(id)}`);
      assert.equal(state.body.canEvaluate, false);
      assert.match(state.body.evalProblem, why);
    }
    fs.writeFileSync(
      path.join(shared, 'runtime_state.json'),
      JSON.stringify({
        ...JSON.parse(fs.readFileSync(path.join(shared, 'runtime_state.json'), 'utf8')),
        status: 'stopped',
      }),
    );
    const resumed = await call('POST', '/api/action/resume', { run: '0/shared/x' });
    assert.equal(resumed.status, 409, JSON.stringify(resumed.body));
    assert.match(resumed.body.error, /cannot be resumed from the dashboard: its config file/);
    assert.equal(fs.existsSync(marker), false, 'the shipped module never ran');
    assert.equal(dash.jobs!.list(path.join(runs, 'shared', 'x')).length, 0);
  });

  it('gives each of two evaluations started in the same second a directory of its own', async () => {
    const first = await call('POST', '/api/action/eval', { run: '0/sim/done' });
    const second = await call('POST', '/api/action/eval', { run: '0/sim/done' });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.notEqual(first.body.job.outDir, second.body.job.outDir);
    for (const j of [first.body.job, second.body.job]) {
      assert.ok(fs.statSync(j.outDir).isDirectory(), `${j.outDir} is made before the process starts`);
      dash.jobs!.interrupt(j.id);
    }
  });

  it('signals no process that a forged run lock names unless it trains that run', async () => {
    const forged = path.join(runs, 'forged');
    fs.cpSync(path.join(runs, 'sim', 'done'), forged, { recursive: true });
    fs.rmSync(path.join(forged, 'summary.json'), { force: true });
    // The lock names this very process, with its real start time: it passes every liveness check.
    fs.writeFileSync(path.join(forged, 'run.lock'), JSON.stringify({ ...me(), host: os.hostname() }));
    let interrupted = 0;
    const onSigint = () => interrupted++;
    process.on('SIGINT', onSigint);
    try {
      const res = await call('POST', '/api/action/stop', { run: '0/forged' });
      assert.equal(res.status, 409, JSON.stringify(res.body));
      assert.match(res.body.error, /names process \d+, which is not a skillopt training of this run/);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(interrupted, 0);
    } finally {
      process.off('SIGINT', onSigint);
    }
  });
});
