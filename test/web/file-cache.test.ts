import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { CachedJson, JsonlTail } from '../../src/web/files/file-cache.ts';
import { tmpDir } from '../helpers/tmp.ts';

describe('JsonlTail', () => {
  const lineOf = (line: unknown, at: { offset: number; length: number }) => ({ line, at });

  it('reads only what was appended, waits for an unfinished line, and knows where each line is', () => {
    const base = fs.realpathSync(tmpDir());
    const file = path.join(base, 'x.jsonl');
    fs.writeFileSync(file, '{"a":1}\n{"b":"é€"}\n{"c":');
    const tail = new JsonlTail(base, file, lineOf);
    assert.deepEqual(
      tail.refresh().map((i) => i.line),
      [{ a: 1 }, { b: 'é€' }],
    );
    fs.appendFileSync(file, '3}\n');
    const items = tail.refresh();
    assert.deepEqual(
      items.map((i) => i.line),
      [{ a: 1 }, { b: 'é€' }, { c: 3 }],
    );
    const text = fs.readFileSync(file);
    for (const { line, at } of items)
      assert.deepEqual(JSON.parse(text.subarray(at.offset, at.offset + at.length).toString('utf8')), line);
    assert.equal(tail.bytes, text.length);
  });

  it('counts lines that are not JSON or not accepted, and starts over when the file is replaced', () => {
    const base = fs.realpathSync(tmpDir());
    const file = path.join(base, 'x.jsonl');
    fs.writeFileSync(file, '{"n":1}\nnot json\n{"n":"two"}\n');
    const tail = new JsonlTail(base, file, (l) => (typeof (l as { n: unknown }).n === 'number' ? l : undefined));
    assert.equal(tail.refresh().length, 1);
    assert.equal(tail.bad, 2);
    fs.writeFileSync(`${file}.new`, '{"n":5}\n');
    fs.renameSync(`${file}.new`, file);
    assert.deepEqual(tail.refresh(), [{ n: 5 }]);
    assert.equal(tail.bad, 0);
    fs.rmSync(file);
    assert.deepEqual(tail.refresh(), []);
  });

  it('reads a file larger than its read buffer, lines across the boundary included', () => {
    const base = fs.realpathSync(tmpDir());
    const file = path.join(base, 'big.jsonl');
    const lines = Array.from({ length: 40000 }, (_, i) => JSON.stringify({ i, pad: 'ü'.repeat(i % 50) }));
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    assert.ok(fs.statSync(file).size > 2 * (1 << 20), 'larger than two read buffers of 1 MiB');
    const got = new JsonlTail(base, file, (l) => (l as { i: number }).i, undefined, Infinity).refresh();
    assert.equal(got.length, 40000);
    assert.ok(got.every((v, i) => v === i));
  });

  it('reads a large file a step at a time, saying how far it is, and every line once in order', async () => {
    const base = fs.realpathSync(tmpDir());
    const file = path.join(base, 'big.jsonl');
    const lines = Array.from({ length: 40000 }, (_, i) => JSON.stringify({ i, pad: 'ü'.repeat(i % 50) }));
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const tail = new JsonlTail(base, file, (l) => (l as { i: number }).i, undefined, 1 << 20);
    const first = tail.refresh().length;
    assert.ok(first > 0 && first < 40000, `the first step read ${first} lines`);
    assert.match(tail.reading!, /reading .*big\.jsonl: 1\.0 MB of \d\.\d MB so far/);
    // The rest is read after other work has had its turn, without another refresh asked for.
    for (let i = 0; i < 100 && tail.reading; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(tail.reading, undefined);
    const got = tail.refresh();
    assert.equal(got.length, 40000);
    assert.ok(got.every((v, i) => v === i));
  });
});

describe('CachedJson', () => {
  it('parses once per version of the file and says what is wrong with a bad one', () => {
    const base = fs.realpathSync(tmpDir());
    const file = path.join(base, 'h.json');
    const cached = new CachedJson(base, file, z.array(z.number()), 'a list of numbers');
    assert.equal(cached.value(), undefined);
    assert.equal(cached.problem(), undefined, 'a missing file is not a problem');
    fs.writeFileSync(file, '[1, 2]');
    const first = cached.value();
    assert.deepEqual(first, [1, 2]);
    assert.equal(cached.value(), first, 'not parsed again');
    fs.writeFileSync(file, '{"x": 1}');
    assert.match(cached.problem()!, /h\.json is not a list of numbers: /);
    fs.writeFileSync(file, '');
    assert.match(cached.problem()!, /h\.json is not valid JSON \(the file is empty\); expected a list of numbers/);
  });
});
