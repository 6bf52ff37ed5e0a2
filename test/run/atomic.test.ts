import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { readJsonLines, writeFileAtomic, writeJsonAtomic } from '../../src/run/atomic.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { TS_IMPORT } from '../helpers/cli.ts';

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
    const child = spawn(process.execPath, [...TS_IMPORT, '--input-type=module', '-e', script], {
      cwd: ROOT,
      stdio: 'ignore',
    });
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

describe('reading journals', () => {
  it('reads lines longer than a read chunk, with characters split across chunks, line by line', async () => {
    const { jsonLines } = await import('../../src/run/atomic.ts');
    const file = path.join(tmpDir(), 'scores.jsonl');
    // 3 MB lines: each spans several 1 MB chunks, and the two-byte 'é' falls on chunk boundaries.
    const long = (n: number) => ({ n, text: `${'é'.repeat(1_500_000 + n)}` });
    fs.writeFileSync(file, `${[long(0), { n: 1 }, long(2)].map((v) => JSON.stringify(v)).join('\n')}\n{"n":3}`);
    const seen = [...jsonLines<{ n: number; text?: string }>(file)];
    assert.deepEqual(
      seen.map((s) => [s.value.n, s.line]),
      [
        [0, 1],
        [1, 2],
        [2, 3],
        [3, 4],
      ],
    );
    assert.equal(seen[2]!.value.text, long(2).text);
  });

  it('skips a line torn by a crash in the middle of the file, and counts lines right after it', async () => {
    const { jsonLines } = await import('../../src/run/atomic.ts');
    const file = path.join(tmpDir(), 'calls.jsonl');
    fs.writeFileSync(file, '{"n":1}\n{"n":2,"res\n{"n":3}\n\n{"n":5}\n');
    assert.deepEqual(
      [...jsonLines<{ n: number }>(file)].map((s) => [s.value.n, s.line]),
      [
        [1, 1],
        [3, 3],
        [5, 5],
      ],
    );
  });

  it('a line too long to hold names the file and the line', async () => {
    const { jsonLines } = await import('../../src/run/atomic.ts');
    const file = path.join(tmpDir(), 'scores.jsonl');
    fs.writeFileSync(file, `{"n":1}\n{"text":"${'x'.repeat(3 << 20)}"}\n`);
    assert.throws(
      () => [...jsonLines(file, { maxLineBytes: 1 << 20 })],
      new RegExp(`${file.replace(/[.]/g, '\\.')}: line 2 is longer than 1048576 bytes`),
    );
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

  it('say where each line is, and read it back from disk: lines appended, and lines found by jsonLines across chunks', async () => {
    const { AppendFile, jsonLines } = await import('../../src/run/atomic.ts');
    const file = path.join(tmpDir(), 'scores.jsonl');
    // A torn line, a line longer than the reader's 1 MB chunk, and text that is not ASCII.
    fs.writeFileSync(file, `{"n":1,"s":"é"}\n{"n":2,"s":"${'x'.repeat(1_500_000)}"}\n{"n":`);
    const out = new AppendFile(file);
    const appended = [out.append('{"n":4,"s":"日本"}'), out.append('{"n":5}')];
    assert.deepEqual(
      appended.map((at) => out.read(at)),
      ['{"n":4,"s":"日本"}', '{"n":5}'],
    );
    const found = [...jsonLines<{ n: number }>(file)];
    assert.deepEqual(
      found.map((l) => l.value.n),
      [1, 2, 4, 5],
    );
    for (const l of found) assert.equal(out.read(l.at), l.text);
    assert.deepEqual(
      found.slice(2).map((l) => [l.at.offset, l.at.bytes]),
      appended.map((at) => [at.offset, at.bytes]),
    );
    out.close();
  });
});

describe('temporary files', () => {
  it('two writers with the same pid (two containers) never share a temporary file', async () => {
    // Two instances of the module: two processes whose pids and counters coincide.
    const load = (instance: string) =>
      import(`../../src/run/atomic.ts?writer=${instance}`) as Promise<typeof import('../../src/run/atomic.ts')>;
    const [a, b] = [await load('a'), await load('b')];
    const file = path.join(tmpDir(), 'best_skill.md');
    function* first() {
      yield 'first writer, part one; ';
      // The second writer starts and finishes while the first is midway.
      b.writeFileAtomic(file, 'second writer');
      yield 'part two';
    }
    a.writeFileAtomic(file, first());
    assert.equal(fs.readFileSync(file, 'utf8'), 'first writer, part one; part two');
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ['best_skill.md']);
  });

  it('a run removes the temporary files that a kill left, and only those', async () => {
    const { trainSim } = await import('../helpers/train.ts');
    const overrides = ['train.num_epochs=1', 'env.n_train=10', 'env.n_val=5', 'env.n_test=5', 'train.batch_size=10'];
    // A run stopped by its budget, as a killed one would be: the next command resumes it.
    const first = await trainSim([...overrides, 'budget.max_calls=20']);
    const leftovers = [
      'best_skill.md.tmp-4242-7',
      'steps/step_0001/candidate_skill.md.tmp-17-0123456789abcdef',
      'skills/skill_v0001.md.tmp-1-3',
    ];
    for (const f of leftovers) fs.writeFileSync(path.join(first.out, f), 'half a skill');
    const mine = ['notes.tmp', 'steps/step_0001/my.tmp-draft'];
    for (const f of mine) fs.writeFileSync(path.join(first.out, f), 'a file of the user');
    await trainSim(overrides, first.out);
    for (const f of leftovers) assert.ok(!fs.existsSync(path.join(first.out, f)), `${f} removed`);
    for (const f of mine) assert.ok(fs.existsSync(path.join(first.out, f)), `${f} kept`);
  });
});
