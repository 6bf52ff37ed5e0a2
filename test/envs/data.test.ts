import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { resolveConfigPath } from '../../src/util/paths.ts';
import { parquetWriteFile } from 'hyparquet-writer';
import { EnvCoreSchema } from '../../src/config/schema.ts';
import { DataError } from '../../src/envs/data/errors.ts';
import { readRecords } from '../../src/envs/data/read.ts';
import {
  canonicalSplit,
  largestRemainder,
  loadSplits,
  parseRatio,
  type ItemReader,
} from '../../src/envs/data/splits.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

const reader: ItemReader = {
  toItem: (rec) => {
    if (rec.fields.id === undefined) throw new DataError("missing field 'id'", rec.where, 'id');
    return { id: String(rec.fields.id), q: rec.fields.q };
  },
};
const envConfig = (over: Record<string, unknown>) => ({ ...EnvCoreSchema.parse({}), ...over });

describe('reading data files', () => {
  it('reads JSONL, JSON arrays, {data: [...]}, CSV, TSV and Parquet with their locations', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'a.jsonl': '{"id": 1, "q": "x"}\n\n{"id": 2, "q": "y"}\n',
      'b.json': '[\n  {"id": 1},\n  {\n    "id": 2\n  }\n]',
      'c.json': '{"data": [{"id": "k"}]}',
      'd.csv': 'id,q\n1,"hello, world"\n2,"two\nlines"\n3,z\n',
      'e.tsv': 'id\tq\n1\tx\n',
    });
    const jsonl = await readRecords(path.join(dir, 'a.jsonl'));
    assert.deepEqual(
      jsonl.map((r) => [r.fields.id, r.where.line]),
      [
        [1, 1],
        [2, 3],
      ],
    );
    const arr = await readRecords(path.join(dir, 'b.json'));
    assert.deepEqual(
      arr.map((r) => [r.where.line, r.where.index]),
      [
        [2, 1],
        [3, 2],
      ],
    );
    assert.equal((await readRecords(path.join(dir, 'c.json')))[0]!.fields.id, 'k');
    const csv = await readRecords(path.join(dir, 'd.csv'));
    assert.deepEqual(
      csv.map((r) => r.fields.q),
      ['hello, world', 'two\nlines', 'z'],
    );
    assert.equal(csv[2]!.where.line, 5);
    assert.equal((await readRecords(path.join(dir, 'e.tsv')))[0]!.fields.q, 'x');
    parquetWriteFile({
      filename: path.join(dir, 'f.parquet'),
      columnData: [
        { name: 'id', data: ['p1', 'p2'], type: 'STRING' },
        { name: 'n', data: [BigInt(5), BigInt(6)], type: 'INT64' },
      ],
    });
    const pq = await readRecords(path.join(dir, 'f.parquet'));
    assert.deepEqual(
      pq.map((r) => [r.fields.id, r.fields.n, r.where.index]),
      [
        ['p1', 5, 1],
        ['p2', 6, 2],
      ],
    );
  });

  it('names the file and line of what it cannot read', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'bad.jsonl': '{"id": 1}\n{"id": 2,,}\n',
      'list.jsonl': '[1, 2]\n',
      'bad.json': '[\n {"id": 1},\n {"id": 2\n]',
      'scalar.json': '"text"',
      'bad.csv': 'id,q\n1,x\n2,y,z\n',
      'junk.parquet': 'not parquet at all',
      'x.txt': 'hello',
    });
    await assert.rejects(readRecords(path.join(dir, 'bad.jsonl')), /bad\.jsonl:2: not valid JSON/);
    await assert.rejects(readRecords(path.join(dir, 'list.jsonl')), /list\.jsonl:1: expected an object/);
    await assert.rejects(readRecords(path.join(dir, 'bad.json')), /bad\.json:4: not valid JSON/);
    await assert.rejects(readRecords(path.join(dir, 'scalar.json')), /expected a JSON array/);
    await assert.rejects(readRecords(path.join(dir, 'bad.csv')), /bad\.csv:3: not valid CSV/);
    await assert.rejects(readRecords(path.join(dir, 'junk.parquet')), /junk\.parquet: not a readable Parquet file/);
    await assert.rejects(readRecords(path.join(dir, 'x.txt')), /unsupported data file type '\.txt'/);
    await assert.rejects(readRecords(path.join(dir, 'missing.jsonl')), /data file not found: .*missing\.jsonl/);
  });
});

describe('splits', () => {
  it('largest remainder gives exact totals', () => {
    assert.deepEqual(largestRemainder(10, [2, 1, 7]), [2, 1, 7]);
    assert.deepEqual(largestRemainder(177, [2, 1, 7]), [35, 18, 124]);
    assert.deepEqual(largestRemainder(4, [1, 1, 1]), [2, 1, 1]);
    for (const n of [0, 1, 7, 13, 101])
      assert.equal(
        largestRemainder(n, [2, 1, 7]).reduce((a, b) => a + b, 0),
        n,
      );
    assert.throws(() => parseRatio('2:1'), /env\.split_ratio/);
    assert.throws(() => parseRatio('0:0:0'), /env\.split_ratio/);
    assert.deepEqual(parseRatio(' 6 : 2 : 2 '), [6, 2, 2]);
  });

  it('split names and aliases', () => {
    assert.equal(canonicalSplit('valid_seen'), 'val');
    assert.equal(canonicalSplit('selection'), 'val');
    assert.equal(canonicalSplit('valid_unseen'), 'test');
    assert.throws(() => canonicalSplit('dev'), /unknown split 'dev'/);
  });

  it('ratio mode: seeded, deterministic, written with a manifest', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'data.jsonl': Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: `q${i}`, q: i })).join('\n'),
    });
    const out = path.join(dir, 'run');
    const cfg = envConfig({ data_path: 'data.jsonl', split_ratio: '2:1:2', split_seed: 7 });
    const a = await loadSplits(
      { env: 'tasks', config: cfg, resolve: (_key, value) => resolveConfigPath(value, dir), outRoot: out },
      reader,
    );
    const b = await loadSplits(
      { env: 'tasks', config: cfg, resolve: (_key, value) => resolveConfigPath(value, dir) },
      reader,
    );
    assert.deepEqual([a.train.length, a.val.length, a.test.length], [8, 4, 8]);
    assert.deepEqual(
      a.train.map((i) => i.id),
      b.train.map((i) => i.id),
    );
    const c = await loadSplits(
      { env: 'tasks', config: { ...cfg, split_seed: 8 }, resolve: (_key, value) => resolveConfigPath(value, dir) },
      reader,
    );
    assert.notDeepEqual(
      a.train.map((i) => i.id),
      c.train.map((i) => i.id),
    );
    const gen = path.join(out, '_generated_splits', 'tasks_2-1-2_seed7');
    assert.equal(a.generatedDir, gen);
    const manifest = JSON.parse(fs.readFileSync(path.join(gen, 'split_manifest.json'), 'utf8'));
    assert.deepEqual(manifest.counts, { train: 8, val: 4, test: 8 });
    assert.deepEqual(
      manifest.ids.val,
      a.val.map((i) => i.id),
    );
    // The written split reads back as the same split.
    const back = await loadSplits(
      { env: 'tasks', config: envConfig({ split_dir: gen }), resolve: (_key, value) => resolveConfigPath(value, dir) },
      reader,
    );
    assert.deepEqual(
      back.test.map((i) => i.id),
      a.test.map((i) => i.id),
    );
    const limited = await loadSplits(
      { env: 'tasks', config: { ...cfg, limit: 3 }, resolve: (_key, value) => resolveConfigPath(value, dir) },
      reader,
    );
    assert.deepEqual([limited.train.length, limited.val.length, limited.test.length], [3, 3, 3]);
  });

  it('errors: empty split, duplicate id, missing split dir, several files, no data', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'three.jsonl': '{"id": 1}\n{"id": 2}\n{"id": 3}\n',
      'dup.jsonl': '{"id": 1}\n{"id": 2}\n{"id": 1}\n',
      'noid.jsonl': '{"id": 1}\n{"q": 2}\n',
      'sd/train/items.json': '[{"id": "a"}]',
      'sd/val/items.json': '[{"id": "b"}]',
      'sd2/train/items.json': '[{"id": "a"}]',
      'sd2/val/items.json': '[{"id": "b"}]',
      'sd2/test/items.json': '[]',
      'sd3/train/a.json': '[{"id": "a"}]',
      'sd3/train/b.jsonl': '{"id": "c"}',
      'sd3/val/items.json': '[{"id": "b"}]',
      'sd3/test/items.json': '[{"id": "a"}]',
    });
    const load = (over: Record<string, unknown>) =>
      loadSplits(
        { env: 't', config: envConfig(over), resolve: (_key, value) => resolveConfigPath(value, dir) },
        reader,
      );
    await assert.rejects(
      load({ data_path: 'three.jsonl', split_ratio: '2:1:7' }),
      /split 'val' is empty \(3 items of .*three\.jsonl cut 2:1:7\)/,
    );
    await assert.rejects(
      load({ data_path: 'dup.jsonl', split_ratio: '1:1:1' }),
      /dup\.jsonl:3: duplicate id '1' \(also at .*dup\.jsonl:1\)/,
    );
    await assert.rejects(load({ data_path: 'noid.jsonl' }), /noid\.jsonl:2: missing field 'id'/);
    await assert.rejects(load({ split_dir: 'sd' }), /has no test\/ directory/);
    await assert.rejects(load({ split_dir: 'sd2' }), /split 'test' is empty/);
    await assert.rejects(load({ split_dir: 'sd3' }), /several data files \(a\.json, b\.jsonl\)/);
    await assert.rejects(load({}), /no data: set env\.data_path/);
    await assert.rejects(load({ data_path: 'nope.jsonl' }), /env\.data_path not found/);
    await assert.rejects(load({ data_path: 'sd2' }), /holds no data file|already holds/);
    await assert.rejects(
      loadSplits(
        {
          env: 't',
          config: envConfig({}),
          resolve: (_key, value) => resolveConfigPath(value, dir),
          files: { train: 'sd/train/items.json', test: 'sd/val/items.json' },
        },
        reader,
      ),
      /env\.val_file is not set/,
    );
  });
});

describe('data files that never end', () => {
  const config = (dir: string, dataPath: string) => {
    writeFiles(dir, {
      'c.yaml': `model:\n  backend: sim\nenv:\n  name: tasks\n  data_path: ${dataPath}\n  split_ratio: "1:1:1"\n`,
    });
    return path.join(dir, 'c.yaml');
  };

  it('a FIFO, a device or a directory as env.data_path is refused at once, with exit 2', () => {
    const dir = tmpDir();
    execFileSync('mkfifo', [path.join(dir, 'pipe.jsonl')]);
    fs.symlinkSync('/dev/zero', path.join(dir, 'zero.jsonl'));
    for (const [data, what] of [
      [path.join(dir, 'pipe.jsonl'), /pipe\.jsonl is a FIFO \(named pipe\), not a file/],
      [path.join(dir, 'zero.jsonl'), /zero\.jsonl is a character device, not a file/],
    ] as const) {
      // In a process of its own, stopped after half a minute: a read that blocks would not end by itself.
      const r = runCli(['train', '--config', config(dir, data), '--dry-run'], { timeoutMs: 30_000 });
      assert.equal(r.status, 2, `${data}: ${r.stderr || `stopped by ${r.signal}`}`);
      assert.match(r.stderr, what);
    }
  });

  it('a data file over the size limit is refused before it is read', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'huge.jsonl');
    fs.writeFileSync(file, '');
    fs.truncateSync(file, 600 * 1024 * 1024); // sparse: no disk, no time
    await assert.rejects(readRecords(file), /huge\.jsonl is 600 MB, over the 512 MB a data file may have/);
  });

  it('reads off the event loop: the process answers while a data file is read', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'a.jsonl');
    fs.writeFileSync(file, Array.from({ length: 50_000 }, (_, i) => JSON.stringify({ id: i, q: 'x' })).join('\n'));
    // Turns of the event loop while the file is read: a read that blocks gives none.
    let turns = 0;
    let reading = true;
    const spin = () => {
      if (!reading) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const records = await readRecords(file);
    reading = false;
    assert.equal(records.length, 50_000);
    assert.ok(turns > 0, 'the event loop turned during the read');
  });

  it('a missing env.data_path names the key, where it was looked for, the value as written and the file that set it', () => {
    const dir = tmpDir();
    const file = config(dir, 'data/nowhere.jsonl');
    const r = runCli(['train', '--config', file, '--dry-run'], { cwd: ROOT });
    assert.equal(r.status, 2, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `env\\.data_path not found: ${path.join(ROOT, 'data/nowhere.jsonl').replace(/[.]/g, '\\.')} or ${path.join(dir, 'data/nowhere.jsonl').replace(/[.]/g, '\\.')} \\('data/nowhere\\.jsonl', set in ${file.replace(/[.]/g, '\\.')}\\)`,
      ),
    );
  });
});
