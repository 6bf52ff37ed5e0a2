import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { acquireRunLock, runningOwner } from '../../src/run/lock.ts';
import { UserError } from '../../src/errors.ts';
import { runCli, TS_IMPORT } from '../helpers/cli.ts';
import { SIM_CONFIG } from '../helpers/train.ts';
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
    const child = spawn(process.execPath, [...TS_IMPORT, '--input-type=module', '-e', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
      child.once('exit', () => reject(new Error('child exited early')));
    });
    try {
      assert.throws(
        () => acquireRunLock(dir),
        (e: unknown) => e instanceof UserError && e.message.includes(`process ${child.pid}`) && e.message.includes(dir),
      );
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
    fs.writeFileSync(
      path.join(dir, 'run.lock'),
      JSON.stringify({ pid: 1, host: `${os.hostname()}-elsewhere`, started: 'x' }),
    );
    assert.throws(() => acquireRunLock(dir), /in use by process 1/);
  });

  it('a lock from another container cannot be judged: the message names the owner and how to take it over', () => {
    const dir = tmpDir();
    const lock = JSON.stringify({ pid: 1, host: 'c1', started: '2026-01-02T03:04:05.000Z' });
    fs.writeFileSync(path.join(dir, 'run.lock'), lock);
    assert.throws(
      () => acquireRunLock(dir),
      (e: unknown) =>
        e instanceof UserError &&
        /in use by process 1 on c1 \(since 2026-01-02T03:04:05.000Z\)/.test(e.message) &&
        /another host \(c1\)/.test(e.message) &&
        /--force-unlock/.test(e.message),
    );
    assert.equal(fs.readFileSync(path.join(dir, 'run.lock'), 'utf8'), lock, 'a refused lock is left as it was');
    const taken = acquireRunLock(dir, { forceUnlock: true });
    assert.equal(taken.replaced, 'took over the lock of process 1 on c1 (since 2026-01-02T03:04:05.000Z)');
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'run.lock'), 'utf8')).pid, process.pid);
    taken.release();
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it('--force-unlock never takes the lock of a process that is running here', () => {
    const dir = tmpDir();
    const first = acquireRunLock(dir);
    assert.throws(
      () => acquireRunLock(dir, { forceUnlock: true }),
      /in use by process \d+.*does not take a lock from a process that is running/,
    );
    first.release();
  });

  it('a pid reused by another process does not keep a dead lock alive', {
    skip: !fs.existsSync('/proc/self/stat') && 'needs /proc',
  }, () => {
    const dir = tmpDir();
    // The parent process runs, but it is not the one that took this lock: the start times differ.
    const owner = JSON.parse(JSON.stringify({ pid: process.ppid, host: os.hostname(), proc_start: '1', started: 'x' }));
    fs.writeFileSync(path.join(dir, 'run.lock'), JSON.stringify(owner));
    const lock = acquireRunLock(dir);
    assert.match(lock.replaced ?? '', new RegExp(`process ${process.ppid}`));
    lock.release();
  });

  it('names the owner of a lock only while that very process runs here (a signal would reach the run)', {
    skip: !fs.existsSync('/proc/self/stat') && 'needs /proc',
  }, () => {
    const dir = tmpDir();
    const lock = acquireRunLock(dir);
    const content = JSON.parse(fs.readFileSync(path.join(dir, 'run.lock'), 'utf8'));
    assert.equal(runningOwner(content)?.pid, process.pid);
    lock.release();
    assert.equal(
      runningOwner({ ...content, pid: process.ppid }),
      undefined,
      'another process under the same pid start time',
    );
    assert.equal(runningOwner({ ...content, pid: 2 ** 22 + 17 }), undefined, 'gone');
    assert.equal(runningOwner({ ...content, host: 'elsewhere' }), undefined, 'not provable from here');
    assert.equal(runningOwner({ pid: 'x' }), undefined, 'not a lock');
  });

  it('a takeover marker left by a process killed while taking over does not block the next one', () => {
    const dir = tmpDir();
    const dead = JSON.stringify({ pid: 2 ** 22 + 17, host: os.hostname(), started: 'x' });
    fs.writeFileSync(path.join(dir, 'run.lock'), dead);
    // A claim and a marker of another dead process, as a kill in the middle of a takeover leaves them.
    const other = JSON.stringify({ pid: 2 ** 22 + 19, host: os.hostname(), started: 'y', nonce: 'ab' });
    const digest = createHash('sha256').update(dead).digest('hex').slice(0, 16);
    fs.writeFileSync(path.join(dir, `run.lock.takeover-${digest}`), other);
    fs.writeFileSync(path.join(dir, 'run.lock.claim-ab'), other);
    const lock = acquireRunLock(dir);
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'run.lock'), 'utf8')).pid, process.pid);
    lock.release();
    assert.deepEqual(fs.readdirSync(dir), [], 'the dead claim and marker are gone');
  });

  it('while a live process takes over a dead lock, another one waits for it instead of taking it too', {
    skip: !fs.existsSync('/proc/self/stat') && 'needs /proc',
  }, () => {
    const dir = tmpDir();
    const dead = JSON.stringify({ pid: 2 ** 22 + 17, host: os.hostname(), started: 'x' });
    fs.writeFileSync(path.join(dir, 'run.lock'), dead);
    // The marker of a takeover in progress, held by a process that runs (this one, as seen from /proc).
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const live = JSON.stringify({
      pid: process.pid,
      host: os.hostname(),
      proc_start: start,
      started: 'y',
      nonce: 'cd',
    });
    const digest = createHash('sha256').update(dead).digest('hex').slice(0, 16);
    fs.writeFileSync(path.join(dir, `run.lock.takeover-${digest}`), live);
    assert.throws(
      () => acquireRunLock(dir),
      /another process is taking over the lock of process 4194321 on .*, which is gone; try again/,
    );
    assert.equal(
      fs.readFileSync(path.join(dir, 'run.lock'), 'utf8'),
      dead,
      'the dead lock is left to the process taking it over',
    );
  });

  it('an empty or unreadable lock is never deleted without --force-unlock', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'run.lock'), '');
    assert.throws(() => acquireRunLock(dir), /in use by an unreadable lock.*--force-unlock/);
    assert.ok(fs.existsSync(path.join(dir, 'run.lock')));
    acquireRunLock(dir, { forceUnlock: true }).release();
  });

  it('adds one exit listener for all the locks of a process', () => {
    const dirs = Array.from({ length: 12 }, () => tmpDir());
    const before = process.listenerCount('exit');
    const locks = dirs.map((d) => acquireRunLock(d));
    assert.ok(process.listenerCount('exit') - before <= 1, `${process.listenerCount('exit') - before} listeners added`);
    for (const l of locks) l.release();
  });

  it('skillopt train refuses a lock from another container, and --force-unlock takes it over and says so', () => {
    const out = path.join(tmpDir(), 'run');
    fs.mkdirSync(out);
    fs.writeFileSync(
      path.join(out, 'run.lock'),
      JSON.stringify({ pid: 1, host: 'c1', started: '2026-01-02T03:04:05.000Z' }),
    );
    const args = [
      'train',
      '--config',
      SIM_CONFIG,
      '--out',
      out,
      '--cfg-options',
      'train.num_epochs=1',
      'env.n_train=10',
      'env.n_val=5',
      'env.n_test=5',
      'train.batch_size=10',
    ];
    const refused = runCli(args);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /in use by process 1 on c1 .*--force-unlock/);
    const forced = runCli([...args, '--force-unlock']);
    assert.equal(forced.status, 0, forced.stderr);
    assert.match(forced.stdout + forced.stderr, /took over the lock of process 1 on c1/);
    assert.ok(!fs.existsSync(path.join(out, 'run.lock')), 'released at the end');
  });
});
