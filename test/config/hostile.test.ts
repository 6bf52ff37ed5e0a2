/**
 * Configs written to do harm: keys that reach an object's prototype, inheritance that grows
 * exponentially, bases that never end (a FIFO, a device) or are huge, and values absurd enough
 * to make a run or its plan endless. Each is refused with an error that names the file and the
 * key; the program that reads them stays well.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { runCli } from '../helpers/cli.ts';
import { SIM_CONFIG } from '../helpers/train.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { rejects } from './rejects.ts';

const noEnv = { environment: {} };

/** No object of this process has gained a property from a config. */
function prototypesClean(): void {
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was changed');
  assert.equal(Object.getOwnPropertyNames(Object.prototype).includes('polluted'), false);
}

describe('config: keys that would reach a prototype', () => {
  for (const key of ['__proto__.polluted', 'train.__proto__.polluted', 'constructor.prototype.polluted', 'prototype']) {
    it(`the override ${key}=1 is refused, naming the key`, () => {
      rejects(
        () => loadConfig(SIM_CONFIG, { ...noEnv, overrides: [`${key}=1`] }),
        new RegExp(
          `^overrides: ${key.replace(/\./g, '\\.')}: '(__proto__|constructor|prototype)' cannot be a config key`,
        ),
      );
      prototypesClean();
    });
  }

  it('a mapping given as a value cannot hold one either', () => {
    rejects(
      () => loadConfig(SIM_CONFIG, { ...noEnv, overrides: ['train={__proto__: {polluted: 1}}'] }),
      /overrides: train: '__proto__' cannot be a config key/,
    );
    prototypesClean();
  });

  it('nor a config file, at any depth, the line named', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'nested.yaml': `_base_: ${SIM_CONFIG}\ntrain:\n  batch_size: 4\n  __proto__:\n    polluted: 1\n`,
      'top.yaml': `_base_: ${SIM_CONFIG}\n__proto__:\n  polluted: 1\n`,
      'ctor.yaml': `_base_: ${SIM_CONFIG}\nmodel:\n  target:\n    constructor: 1\n`,
    });
    rejects(
      () => loadConfig(path.join(dir, 'nested.yaml'), noEnv),
      /nested\.yaml:4:\d+: '__proto__' cannot be a config key/,
    );
    rejects(() => loadConfig(path.join(dir, 'top.yaml'), noEnv), /top\.yaml:2:\d+: '__proto__' cannot be a config key/);
    rejects(
      () => loadConfig(path.join(dir, 'ctor.yaml'), noEnv),
      /ctor\.yaml:4:\d+: 'constructor' cannot be a config key/,
    );
    prototypesClean();
  });

  it('the command line refuses them with exit 2', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'top.yaml': `_base_: ${SIM_CONFIG}\n__proto__:\n  polluted: 1\n` });
    const set = runCli([
      'train',
      '--config',
      SIM_CONFIG,
      '--set',
      '__proto__.polluted=1',
      '--out',
      path.join(dir, 'a'),
    ]);
    assert.equal(set.status, 2, set.stderr);
    assert.match(set.stderr, /^skillopt: --set: __proto__\.polluted: '__proto__' cannot be a config key/);
    const file = runCli(['train', '--config', path.join(dir, 'top.yaml'), '--out', path.join(dir, 'b')]);
    assert.equal(file.status, 2, file.stderr);
    assert.match(file.stderr, /top\.yaml:2:\d+: '__proto__' cannot be a config key/);
    assert.deepEqual(fs.readdirSync(dir), ['top.yaml']);
  });
});

describe('config: bases that never end', () => {
  it('a diamond of 22 levels of two bases each loads every base once', () => {
    const dir = tmpDir();
    const files: Record<string, string> = { 'l0a.yaml': `_base_: ${SIM_CONFIG}\n`, 'l0b.yaml': 'train: {seed: 1}\n' };
    for (let i = 1; i <= 22; i++)
      for (const side of ['a', 'b'])
        files[`l${i}${side}.yaml`] = `_base_: [l${i - 1}a.yaml, l${i - 1}b.yaml]\ntrain: {batch_size: ${i}}\n`;
    writeFiles(dir, files);
    // In a process of its own: an exponential load would not stop by itself.
    const r = runCli(['train', '--config', path.join(dir, 'l22a.yaml'), '--dry-run'], { timeoutMs: 60_000 });
    assert.equal(r.status, 0, r.stderr || `signal ${r.signal}`);
    assert.match(r.stdout, /Dry run/);
    const loaded = loadConfig(path.join(dir, 'l22a.yaml'), noEnv);
    assert.equal(loaded.config.train.batch_size, 22);
    assert.equal(loaded.files.length, new Set(loaded.files).size, 'each file listed once');
    assert.equal(
      loaded.files.length,
      2 + 2 + 2 * 21 + 1,
      'the sim config and its base, then every file of the diamond',
    );
  });

  it('a FIFO, a device or a directory as _base_ is refused at once', () => {
    const dir = tmpDir();
    execFileSync('mkfifo', [path.join(dir, 'pipe.yaml')]);
    fs.mkdirSync(path.join(dir, 'folder.yaml'));
    writeFiles(dir, {
      'fifo.yaml': '_base_: pipe.yaml\n',
      'zero.yaml': '_base_: /dev/zero\n',
      'dir.yaml': '_base_: folder.yaml\n',
    });
    for (const [file, what] of [
      ['fifo.yaml', /pipe\.yaml is a FIFO \(named pipe\), not a file/],
      ['zero.yaml', /\/dev\/zero is a character device, not a file/],
      ['dir.yaml', /folder\.yaml is a directory, not a file/],
    ] as const) {
      const r = runCli(['train', '--config', path.join(dir, file), '--dry-run'], { timeoutMs: 30_000 });
      assert.equal(r.status, 2, `${file}: ${r.stderr || `signal ${r.signal}`}`);
      assert.match(r.stderr, new RegExp(`${file.replace('.', '\\.')}: _base_: `));
      assert.match(r.stderr, what);
    }
    // The config named on the command line too.
    const r = runCli(['train', '--config', path.join(dir, 'pipe.yaml'), '--dry-run'], { timeoutMs: 30_000 });
    assert.equal(r.status, 2, r.stderr || `signal ${r.signal}`);
    assert.match(r.stderr, /pipe\.yaml is a FIFO \(named pipe\), not a file/);
  });

  it('a config file over the size limit is refused, naming the file and the limit', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'big.yaml': `env:\n  analyst_guide: "${'x'.repeat(3 * 1024 * 1024)}"\n`,
      'child.yaml': '_base_: big.yaml\n',
    });
    rejects(
      () => loadConfig(path.join(dir, 'child.yaml'), noEnv),
      /big\.yaml is 3\.0 MB, over the 2 MB a config file may have/,
    );
  });
});

describe('config: absurd values', () => {
  for (const [key, value, bound] of [
    ['train.num_epochs', '99999999999', /at most 10,000/],
    ['train.batch_size', '1e12', /at most 1,000,000/],
    ['train.accumulation', '1000000', /at most 10,000/],
    ['evaluation.gate_repeats', '5000', /at most 1,000/],
    ['model.target.concurrency', '1000000', /at most 10,000/],
    ['env.workers', '1000000', /at most 10,000/],
  ] as const) {
    it(`${key}=${value} is refused, naming the key and the bound`, () => {
      rejects(
        () => loadConfig(SIM_CONFIG, { ...noEnv, overrides: [`${key}=${value}`] }),
        new RegExp(`overrides: ${key.replace(/\./g, '\\.')}: `),
        bound,
      );
    });
  }
});
