import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

describe('skillopt CLI', () => {
  it('--help lists the commands', () => {
    const r = runCli(['--help']);
    assert.equal(r.status, 0);
    for (const cmd of ['train', 'eval', 'ui']) assert.match(r.stdout, new RegExp(`\\n\\s+${cmd}\\b`));
  });

  it('every command has --help', () => {
    for (const cmd of ['train', 'eval', 'ui']) {
      const r = runCli([cmd, '--help']);
      assert.equal(r.status, 0, cmd);
      assert.match(r.stdout, new RegExp(`Usage: skillopt ${cmd}`));
    }
    assert.match(runCli(['train', '--help']).stdout, /--cfg-options/);
  });

  it('--version prints the package version', () => {
    const r = runCli(['--version']);
    assert.equal(r.status, 0);
    assert.match(r.stdout.trim(), /^\d+\.\d+\.\d+$/);
  });

  it('bad usage exits with 2', () => {
    assert.equal(runCli(['trian']).status, 2);
    assert.equal(runCli(['train']).status, 2, 'a missing --config');
    assert.equal(runCli(['train', '--config', 'x.yaml', '--no-such-flag']).status, 2);
  });

  it('bad input exits with 2 and names the file and key', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'bad.yaml': 'model:\n  backend: sim\ntrain:\n  batch_size: -3\n' });
    const r = runCli(['train', '--config', path.join(dir, 'bad.yaml')]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /bad\.yaml: train\.batch_size/);
    const missing = runCli(['train', '--config', path.join(dir, 'nope.yaml')]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /config file not found/);
  });
});
