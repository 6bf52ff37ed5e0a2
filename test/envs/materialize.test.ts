import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { materialize } from '../../src/envs/materialize.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

const FIX = path.join(ROOT, 'test/fixtures');
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
const manifestIds = (bench: string, split: string) =>
  readJson(path.join(FIX, bench, 'manifest', split, 'items.json')).map((r: { id: string }) => r.id);

describe('data materialize', () => {
  for (const bench of ['searchqa', 'livemathematicianbench', 'docvqa', 'officeqa']) {
    it(`${bench}: with a manifest, exactly its ids in its order`, async () => {
      const out = path.join(tmpDir(), 'splits');
      const raw = path.join(FIX, bench, bench === 'officeqa' ? 'raw/officeqa_full.csv' : 'raw');
      const report = await materialize({ benchmark: bench, raw, manifest: path.join(FIX, bench, 'manifest'), out });
      assert.equal(report.mode, 'manifest');
      for (const split of ['train', 'val', 'test']) {
        const items = readJson(path.join(out, split, 'items.json'));
        assert.deepEqual(
          items.map((r: { id: string }) => r.id),
          manifestIds(bench, split),
          split,
        );
      }
      const manifest = readJson(path.join(out, 'split_manifest.json'));
      assert.deepEqual(manifest.counts, report.counts);
      assert.equal(manifest.missing, undefined);
    });
  }

  it('searchqa items hold what the env reads; docvqa writes the images it points at', async () => {
    const sq = path.join(tmpDir(), 'sq');
    await materialize({
      benchmark: 'searchqa',
      raw: path.join(FIX, 'searchqa/raw'),
      manifest: path.join(FIX, 'searchqa/manifest'),
      out: sq,
    });
    const first = readJson(path.join(sq, 'train/items.json'))[0];
    assert.deepEqual(Object.keys(first).sort(), ['answers', 'context', 'id', 'question']);
    assert.deepEqual(first.answers, ['iron']);
    const dv = path.join(tmpDir(), 'dv');
    await materialize({
      benchmark: 'docvqa',
      raw: path.join(FIX, 'docvqa/raw'),
      manifest: path.join(FIX, 'docvqa/manifest'),
      out: dv,
    });
    const item = readJson(path.join(dv, 'test/items.json'))[0];
    assert.equal(item.image_path, 'images/q49155_d103.png');
    assert.equal(item.topic, 'table/list');
    const png = fs.readFileSync(path.join(dv, item.image_path));
    assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    assert.equal(fs.readdirSync(path.join(dv, 'images')).length, 10, 'only the images of selected items');
    const oq = path.join(tmpDir(), 'oq');
    await materialize({
      benchmark: 'officeqa',
      raw: path.join(FIX, 'officeqa/raw/officeqa_full.csv'),
      manifest: path.join(FIX, 'officeqa/manifest'),
      out: oq,
    });
    const two = readJson(path.join(oq, 'test/items.json')).find((r: { id: string }) => r.id === 'oq-009');
    assert.deepEqual(
      two.source_files,
      ['treasury_bulletin_1962_12.txt', 'treasury_bulletin_1951_06.txt'],
      'newline-separated list',
    );
    assert.equal(two.ground_truth, '1.13');
    assert.equal(two.source_split, 'made-up', 'manifest fields the raw data lacks are kept');
  });

  it('without a manifest: a seeded split by ratio, the same every time', async () => {
    const a = await materialize({
      benchmark: 'searchqa',
      raw: path.join(FIX, 'searchqa/raw'),
      out: path.join(tmpDir(), 'a'),
    });
    const b = await materialize({
      benchmark: 'searchqa',
      raw: path.join(FIX, 'searchqa/raw'),
      out: path.join(tmpDir(), 'b'),
    });
    assert.deepEqual(a.counts, { train: 3, val: 2, test: 11 });
    for (const split of ['train', 'val', 'test'])
      assert.deepEqual(
        readJson(path.join(a.out, split, 'items.json')),
        readJson(path.join(b.out, split, 'items.json')),
      );
    const c = await materialize({
      benchmark: 'searchqa',
      raw: path.join(FIX, 'searchqa/raw'),
      out: path.join(tmpDir(), 'c'),
      seed: 5,
      ratio: '1:1:2',
    });
    assert.deepEqual(c.counts, { train: 4, val: 4, test: 8 });
    assert.equal(readJson(path.join(c.out, 'split_manifest.json')).split_seed, 5);
    const lm = await materialize({
      benchmark: 'livemathematicianbench',
      raw: path.join(FIX, 'livemathematicianbench/raw'),
      out: path.join(tmpDir(), 'lm'),
    });
    assert.equal(lm.counts.train + lm.counts.val + lm.counts.test, 11, 'every published item');
  });

  it('lists missing ids; --allow-missing writes the rest and records them', async () => {
    const dir = tmpDir();
    fs.cpSync(path.join(FIX, 'searchqa/manifest'), path.join(dir, 'm'), { recursive: true });
    const val = readJson(path.join(dir, 'm/val/items.json'));
    writeFiles(dir, { 'm/val/items.json': JSON.stringify([...val, { id: 'gone-1' }, { id: 'gone-2' }]) });
    await assert.rejects(
      materialize({
        benchmark: 'searchqa',
        raw: path.join(FIX, 'searchqa/raw'),
        manifest: path.join(dir, 'm'),
        out: path.join(dir, 'o'),
      }),
      /2 manifest ids are not in the raw data .*: val:gone-1, val:gone-2\. Check --raw/,
    );
    assert.equal(fs.existsSync(path.join(dir, 'o')), false, 'nothing written');
    const report = await materialize({
      benchmark: 'searchqa',
      raw: path.join(FIX, 'searchqa/raw'),
      manifest: path.join(dir, 'm'),
      out: path.join(dir, 'o'),
      allowMissing: true,
    });
    assert.deepEqual(report.missing.val, ['gone-1', 'gone-2']);
    assert.deepEqual(readJson(path.join(dir, 'o/split_manifest.json')).missing.val, ['gone-1', 'gone-2']);
    assert.equal(readJson(path.join(dir, 'o/val/items.json')).length, 3);
  });

  it('officeqa --docs: items whose bulletin is not there are left out and listed; a split left empty is an error', async () => {
    const dir = tmpDir();
    fs.cpSync(path.join(FIX, 'officeqa/docs'), path.join(dir, 'docs'), { recursive: true });
    fs.rmSync(path.join(dir, 'docs/treasury_bulletin_1962_12.txt'));
    const raw = path.join(FIX, 'officeqa/raw/officeqa_full.csv');
    const r = runCli([
      'data',
      'materialize',
      'officeqa',
      '--raw',
      raw,
      '--manifest',
      path.join(FIX, 'officeqa/manifest'),
      '--docs',
      path.join(dir, 'docs'),
      '--out',
      path.join(dir, 'o'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /officeqa: train=3 val=2 test=2 \(ids and order from the manifest\)/);
    assert.match(
      r.stderr,
      /^warning: officeqa: 2 of 9 items left out, 7 kept: test:oq-008 \(source file not in --docs: treasury_bulletin_1962_12\.txt\), test:oq-009 \(source file not in --docs: treasury_bulletin_1962_12\.txt\) \(listed in split_manifest\.json\)$/m,
    );
    const manifest = readJson(path.join(dir, 'o/split_manifest.json'));
    assert.deepEqual(
      manifest.left_out.map((l: { split: string; id: string }) => `${l.split}:${l.id}`),
      ['test:oq-008', 'test:oq-009'],
    );
    assert.deepEqual(manifest.counts, { train: 3, val: 2, test: 2 });
    assert.deepEqual(
      readJson(path.join(dir, 'o/test/items.json')).map((i: { id: string }) => i.id),
      ['oq-004', 'oq-007'],
    );
    const ratio = await materialize({
      benchmark: 'officeqa',
      raw,
      docs: [path.join(dir, 'docs')],
      out: path.join(dir, 'r'),
      ratio: '1:1:1',
    });
    assert.deepEqual(
      ratio.leftOut.map((l) => l.id),
      ['oq-008', 'oq-009'],
    );
    assert.equal(ratio.counts.train + ratio.counts.val + ratio.counts.test, 7);
    fs.rmSync(path.join(dir, 'docs/treasury_bulletin_1944_01.txt'));
    fs.rmSync(path.join(dir, 'docs/treasury_bulletin_1951_06.txt'));
    await assert.rejects(
      materialize({
        benchmark: 'officeqa',
        raw,
        manifest: path.join(FIX, 'officeqa/manifest'),
        docs: [path.join(dir, 'docs')],
        out: path.join(dir, 'e'),
      }),
      /split 'train' has no item left: all 3 were left out: train:oq-001 \(source file not in --docs: treasury_bulletin_1944_01\.txt\), train:oq-005/,
    );
    assert.equal(fs.existsSync(path.join(dir, 'e')), false, 'nothing written');
    await assert.rejects(
      materialize({
        benchmark: 'searchqa',
        raw: path.join(FIX, 'searchqa/raw'),
        docs: [dir],
        out: path.join(dir, 's'),
      }),
      /--docs does not apply to searchqa/,
    );
    await assert.rejects(
      materialize({ benchmark: 'officeqa', raw, docs: [path.join(dir, 'nope')], out: path.join(dir, 's') }),
      /--docs .*nope: not a directory/,
    );
  });

  it('bad manifests and raw data are clear errors', async () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'dup/train/items.json': '[{"id": "sq0001"}]',
      'dup/val/items.json': '[{"id": "sq0002"}]',
      'dup/test/items.json': '[{"id": "sq0003"},\n{"id": "sq0001"}]',
      'noval/train/items.json': '[]',
      'raw.jsonl':
        '{"key": "k1", "question": "q", "context": "c", "answers": ["a"]}\n{"key": "k1", "question": "q", "context": "c", "answers": ["a"]}\n',
      'noans.jsonl': '{"key": "k1", "question": "q", "context": "c"}\n',
    });
    const raw = path.join(FIX, 'searchqa/raw');
    await assert.rejects(
      materialize({ benchmark: 'searchqa', raw, manifest: path.join(dir, 'dup'), out: path.join(dir, 'o') }),
      /test\/items\.json:2 \(item 2\): id 'sq0001' appears twice in the manifest/,
    );
    await assert.rejects(
      materialize({ benchmark: 'searchqa', raw, manifest: path.join(dir, 'noval'), out: path.join(dir, 'o') }),
      /has no val\/ directory/,
    );
    await assert.rejects(
      materialize({ benchmark: 'searchqa', raw: path.join(dir, 'raw.jsonl'), out: path.join(dir, 'o') }),
      /raw\.jsonl:2: duplicate id 'k1' in the raw data/,
    );
    await assert.rejects(
      materialize({ benchmark: 'searchqa', raw: path.join(dir, 'noans.jsonl'), out: path.join(dir, 'o') }),
      /noans\.jsonl:1: missing field 'answers'/,
    );
    await assert.rejects(materialize({ benchmark: 'nope', raw, out: path.join(dir, 'o') }), /unknown benchmark 'nope'/);
  });

  it('the CLI command', () => {
    const out = path.join(tmpDir(), 'cli');
    const r = runCli([
      'data',
      'materialize',
      'livemathematicianbench',
      '--raw',
      path.join(FIX, 'livemathematicianbench/raw'),
      '--manifest',
      path.join(FIX, 'livemathematicianbench/manifest'),
      '--out',
      out,
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /livemathematicianbench: train=3 val=2 test=6 \(ids and order from the manifest\)/);
    assert.ok(fs.existsSync(path.join(out, 'test/items.json')));
    const bad = runCli(['data', 'materialize', 'searchqa', '--raw', path.join(FIX, 'nope'), '--out', out]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--raw not found/);
  });
});
