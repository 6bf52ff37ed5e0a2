import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tmpDir } from '../helpers/tmp.ts';
import { TS_IMPORT } from '../helpers/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Children that each try to lock the directory named on their stdin, all at once. */
function contenders(n: number) {
  const script = `
    import { acquireRunLock } from ${JSON.stringify(path.join(ROOT, 'src/run/lock.ts'))};
    let held;
    let buffer = '';
    process.stdin.on('data', (d) => {
      buffer += d;
      let i;
      while ((i = buffer.indexOf('\\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        if (line === 'release') { held?.release(); held = undefined; process.stdout.write('released\\n'); continue; }
        try { held = acquireRunLock(line.slice(3)); process.stdout.write('won\\n'); }
        catch (e) { process.stdout.write(/in use/.test(e.message) ? 'lost\\n' : 'error ' + e.message.replace(/\\n/g, ' ') + '\\n'); }
      }
    });
    process.stdout.write('ready\\n');
  `;
  const children: ChildProcessWithoutNullStreams[] = [];
  const lines: string[][] = [];
  const waiters: (() => void)[] = [];
  for (let k = 0; k < n; k++) {
    const child = spawn(process.execPath, [...TS_IMPORT, '--input-type=module', '-e', script], { cwd: ROOT });
    lines.push([]);
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        lines[k]!.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
        for (const w of waiters.splice(0)) w();
      }
    });
    children.push(child);
  }
  const until = async (ok: () => boolean) => {
    while (!ok()) await new Promise<void>((r) => waiters.push(r));
  };
  return {
    async ready() {
      await until(() => lines.every((l) => l.includes('ready')));
    },
    /** Sends one line to every child and waits for one answer from each. */
    async all(line: string): Promise<string[]> {
      const before = lines.map((l) => l.length);
      for (const c of children) c.stdin.write(`${line}\n`);
      await until(() => lines.every((l, k) => l.length > before[k]!));
      return lines.map((l, k) => l[before[k]!]!);
    },
    close() {
      for (const c of children) c.kill('SIGKILL');
    },
  };
}

describe('run lock under contention', () => {
  let pool: ReturnType<typeof contenders>;
  before(async () => {
    pool = contenders(8);
    await pool.ready();
  });
  after(() => pool.close());

  it('of many processes starting at once on one directory, exactly one wins, every time', async () => {
    for (let round = 0; round < 20; round++) {
      const dir = tmpDir();
      const answers = await pool.all(`go ${dir}`);
      assert.deepEqual(
        answers.filter((a) => !['won', 'lost'].includes(a)),
        [],
        'no other outcome',
      );
      assert.equal(answers.filter((a) => a === 'won').length, 1, `round ${round}: ${answers.join(',')}`);
      await pool.all('release');
      assert.deepEqual(fs.readdirSync(dir), [], 'the winner removes its lock; no claim is left');
    }
  });

  it('of many processes finding the lock of a dead owner at once, exactly one takes it over', async () => {
    for (let round = 0; round < 20; round++) {
      const dir = tmpDir();
      // A process of this host that no longer exists.
      fs.writeFileSync(
        path.join(dir, 'run.lock'),
        JSON.stringify({ pid: 2 ** 22 + 17, host: os.hostname(), started: new Date().toISOString() }),
      );
      const answers = await pool.all(`go ${dir}`);
      assert.deepEqual(
        answers.filter((a) => !['won', 'lost'].includes(a)),
        [],
        'no other outcome',
      );
      assert.equal(answers.filter((a) => a === 'won').length, 1, `round ${round}: ${answers.join(',')}`);
      await pool.all('release');
      assert.deepEqual(fs.readdirSync(dir), [], 'no lock, claim or takeover marker is left');
    }
  });
});
