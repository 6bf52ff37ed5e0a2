import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { trainingChanges } from '../../src/app/resume-check.ts';
import { loadConfig } from '../../src/config/load.ts';
import { rejects } from '../config/rejects.ts';
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../src/errors.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { SIM_CONFIG, trainSim } from '../helpers/train.ts';

describe('config: run.queue', () => {
  it('takes a Redis URL, and is empty by default (rollouts in this process)', () => {
    assert.equal(loadConfig(SIM_CONFIG, { environment: {} }).config.run.queue, '');
    assert.equal(
      loadConfig(SIM_CONFIG, { environment: {}, overrides: ['run.queue=redis://10.0.0.5:6379'] }).config.run.queue,
      'redis://10.0.0.5:6379',
    );
  });

  it('refuses what is not a Redis URL, naming the key', () => {
    rejects(
      () => loadConfig(SIM_CONFIG, { environment: {}, overrides: ['run.queue=localhost:6379'] }),
      /run\.queue/,
      /expected a Redis URL/,
    );
  });

  it('may change on resume: where rollouts run does not change what is trained', () => {
    const { config: before, secretPaths } = loadConfig(SIM_CONFIG, { environment: {} });
    const stored = JSON.parse(JSON.stringify(before)) as Record<string, unknown>;
    // A run started before the key existed has no `run` section in its config.json.
    delete stored.run;
    const { config: now } = loadConfig(SIM_CONFIG, { environment: {}, overrides: ['run.queue=redis://10.0.0.5:6379'] });
    assert.deepEqual(trainingChanges(stored, now, secretPaths), []);
  });
});

describe('a Redis that cannot be reached', () => {
  it('stops the run before anything is sent or written, naming the URL', async () => {
    const out = path.join(tmpDir('skillopt-queue-'), 'run');
    // Port 1 on loopback: nothing listens there.
    await assert.rejects(
      trainSim(['run.queue=redis://127.0.0.1:1'], out),
      (err) => err instanceof UserError && /run\.queue: cannot use Redis at redis:\/\/127\.0\.0\.1:1/.test(err.message),
    );
    assert.ok(!fs.existsSync(out), 'no run directory is left');
  });
});
