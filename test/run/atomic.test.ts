import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { readJsonLines, writeFileAtomic, writeJsonAtomic } from '../../src/run/atomic.ts';
import { tmpDir } from '../helpers/tmp.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('atomic writes', () => {
  it('a write that fails midway leaves the previous file intact and no temporary file', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'history.json');
    writeJsonAtomic(file, { version: 1 });
    function* chunks() {
      yield '{"version": ';
      throw new Error('disk on fire');
    }
    assert.throws(() => writeFileAtomic(file, chunks()), /disk on fire/);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { version: 1 });
    assert.deepEqual(fs.readdirSync(dir), ['history.json']);
  });

  it('a process killed while writing leaves the previous file intact', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'big.json');
    writeJsonAtomic(file, { generation: 'old' });
    // A child writes 512 MB slowly enough to be caught midway, then is killed.
    const script = `
      import { writeFileAtomic } from ${JSON.stringify(path.join(ROOT, 'src/run/atomic.ts'))};
      const chunk = 'x'.repeat(1 << 20);
      function* gen() { for (let i = 0; i < 512; i++) yield chunk; }
      writeFileAtomic(${JSON.stringify(file)}, gen());
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: 'ignore' });
    let tmpSeen = false;
    for (let i = 0; i < 400 && !tmpSeen; i++) {
      await sleep(25);
      tmpSeen = fs.readdirSync(dir).some((f) => f.includes('.tmp-') && fs.statSync(path.join(dir, f)).size > 0);
    }
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    assert.ok(tmpSeen, 'the child was caught midway through its write');
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { generation: 'old' });
  });

  it('JSONL reading ignores a torn last line', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'events.jsonl');
    fs.writeFileSync(file, '{"a":1}\n{"a":2}\n{"a":');
    assert.deepEqual(readJsonLines(file), [{ a: 1 }, { a: 2 }]);
  });
});

describe('append streams', () => {
  it('after a torn last line, the next record starts on a line of its own', async () => {
    const { AppendFile } = await import('../../src/run/atomic.ts');
    const file = path.join(tmpDir(), 'calls.jsonl');
    fs.writeFileSync(file, '{"n":1}\n{"n":2}\n{"n":');
    const out = new AppendFile(file);
    out.append('{"n":4}');
    out.append('{"n":5}');
    out.close();
    assert.deepEqual(readJsonLines(file), [{ n: 1 }, { n: 2 }, { n: 4 }, { n: 5 }]);
  });
});
