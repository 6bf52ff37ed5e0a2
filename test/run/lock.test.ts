import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { acquireRunLock } from '../../src/run/lock.ts';
import { UserError } from '../../src/errors.ts';
import { tmpDir } from '../helpers/tmp.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('run lock', () => {
  it('refuses a second process while the first holds the directory', async () => {
    const dir = tmpDir();
    const script = `
      import { acquireRunLock } from ${JSON.stringify(path.join(ROOT, 'src/run/lock.ts'))};
      acquireRunLock(${JSON.stringify(dir)});
      process.stdout.write('locked\\n');
      setTimeout(() => {}, 60000);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
      child.once('exit', () => reject(new Error('child exited early')));
    });
    try {
      assert.throws(() => acquireRunLock(dir), (e: unknown) => e instanceof UserError && e.message.includes(`process ${child.pid}`) && e.message.includes(dir));
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    // The holder died without releasing: its lock is stale and is taken over.
    const lock = acquireRunLock(dir);
    lock.release();
    assert.ok(!fs.existsSync(path.join(dir, 'run.lock')));
  });

  it('refuses a second lock in the same process, and can be taken again after release', () => {
    const dir = tmpDir();
    const first = acquireRunLock(dir);
    assert.throws(() => acquireRunLock(dir), /in use/);
    first.release();
    acquireRunLock(dir).release();
  });

  it('respects a lock held by a live process on another host', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'run.lock'), JSON.stringify({ pid: 1, host: `${os.hostname()}-elsewhere`, started: 'x' }));
    assert.throws(() => acquireRunLock(dir), /in use by process 1/);
  });
});
