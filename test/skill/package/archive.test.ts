import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { zipSync } from 'fflate';
import {
  packageArchive,
  packageFromArchive,
  readPackageArchive,
  writePackageArchive,
} from '../../../src/skill/package/archive.ts';
import { DEFAULT_LIMITS, readPackageDir } from '../../../src/skill/package/folder.ts';
import { packageHash } from '../../../src/skill/package/package.ts';
import { crc32, writeZip } from '../../../src/skill/package/zip.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import {
  assertProblem,
  assertSameFiles,
  copyFixture,
  FIXTURE_NAMES,
  fixture,
  folderFiles,
  packageFiles,
} from './helpers.ts';

const SKILL = Buffer.from('---\nname: demo\ndescription: A demo skill.\n---\n\n# Demo\n');
const zipOf = (files: Record<string, Uint8Array | string>, mode = 0o644) =>
  writeZip(
    Object.entries(files).map(([name, bytes]) => ({
      name,
      bytes: typeof bytes === 'string' ? Buffer.from(bytes) : bytes,
      mode,
    })),
  );

/** The entries of a zip as they are laid out: each local header's offset and the central record's. */
function layout(zip: Uint8Array): { name: string; local: number; central: number }[] {
  const view = Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength);
  const eocd = view.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = view.readUInt16LE(eocd + 10);
  let central = view.readUInt32LE(eocd + 16);
  const out = [];
  for (let i = 0; i < count; i++) {
    const nameLength = view.readUInt16LE(central + 28);
    const name = view.subarray(central + 46, central + 46 + nameLength).toString('utf8');
    out.push({ name, local: view.readUInt32LE(central + 42), central });
    central += 46 + nameLength + view.readUInt16LE(central + 30) + view.readUInt16LE(central + 32);
  }
  return out;
}

/** A zip whose entry `name` declares `size` bytes, in its local header and its central record. */
function withDeclaredSize(zip: Uint8Array, name: string, size: number): Buffer {
  const out = Buffer.from(zip);
  const entry = layout(out).find((e) => e.name === name)!;
  out.writeUInt32LE(size, entry.local + 22);
  out.writeUInt32LE(size, entry.central + 24);
  return out;
}

const python = spawnSync('python3', ['--version'], { encoding: 'utf8' });
const noPython =
  python.error || python.status !== 0 ? 'python3 is not installed: the real format is not checked' : false;

/** Packs a folder as skill-creator's package_skill.py does: every file under it, named from its parent, less what it leaves out. */
const PACK_LIKE_SKILL_CREATOR = `
import sys, zipfile
from pathlib import Path

folder = Path(sys.argv[1]).resolve()

def skipped(arcname):
    parts = arcname.parts
    if any(p in ("__pycache__", "node_modules") for p in parts):
        return True
    if len(parts) > 1 and parts[1] == "evals":
        return True
    return arcname.name == ".DS_Store" or arcname.name.endswith(".pyc")

with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as archive:
    for item in folder.rglob("*"):
        if item.is_file() and not skipped(item.relative_to(folder.parent)):
            archive.write(item, item.relative_to(folder.parent))
`;

/** What Python's zipfile sees in an archive: per entry the fields of the format, not the date. */
const LIST_ENTRIES = `
import json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    print(json.dumps(sorted(
        [i.filename, i.external_attr, i.create_system, i.create_version, i.extract_version,
         i.flag_bits, i.compress_type, i.file_size, i.CRC, i.extra.hex()]
        for i in archive.infolist())))
`;

const runPython = (script: string, ...args: string[]) => {
  const r = spawnSync('python3', ['-c', script, ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
};

describe('a skill archive', () => {
  for (const name of FIXTURE_NAMES)
    it(`of ${name} reads back byte for byte, and the same package always gives the same bytes`, () => {
      const pkg = readPackageDir(fixture(name));
      const archive = packageArchive(pkg, name);
      const back = packageFromArchive(archive, `${name}.skill`);
      assert.equal(back.name, name);
      assertSameFiles(packageFiles(back.pkg), folderFiles(fixture(name), ['evals']), name);
      assert.equal(packageHash(back.pkg), packageHash(pkg));
      assert.ok(Buffer.from(packageArchive(back.pkg, name)).equals(Buffer.from(archive)), 'archive bytes differ');
    });

  it('names every entry from the skill folder, SKILL.md first, scripts executable', () => {
    const zip = packageArchive(readPackageDir(fixture('pdf-forms')), 'pdf-forms');
    const names = layout(zip).map((e) => e.name);
    assert.equal(names[0], 'pdf-forms/SKILL.md');
    assert.ok(names.every((n) => n.startsWith('pdf-forms/')));
    assert.ok(names.includes('pdf-forms/scripts/extract_layout.py'));
    assert.ok(!names.some((n) => n.endsWith('/')), 'no directory entries');
  });

  it('is written atomically to a file and read from it', () => {
    const file = path.join(tmpDir(), 'poster-design.skill');
    writePackageArchive(file, readPackageDir(fixture('poster-design')), 'poster-design');
    const back = readPackageArchive(file);
    assertSameFiles(packageFiles(back.pkg), folderFiles(fixture('poster-design')), 'from file');
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ['poster-design.skill']);
  });

  it('is what skill-creator packs: its archive reads as the folder, ours lists as its own', { skip: noPython }, () => {
    const root = tmpDir();
    const copy = copyFixture('skill-maker', root);
    for (const junk of [
      'scripts/__pycache__/utils.cpython-312.pyc',
      'scripts/old.pyc',
      '.DS_Store',
      'node_modules/a.js',
    ]) {
      fs.mkdirSync(path.dirname(path.join(copy, junk)), { recursive: true });
      fs.writeFileSync(path.join(copy, junk), Buffer.from([0, 1, 2]));
    }
    const theirs = path.join(root, 'skill-maker.skill');
    runPython(PACK_LIKE_SKILL_CREATOR, copy, theirs);
    const read = readPackageArchive(theirs);
    assert.equal(read.name, 'skill-maker');
    assertSameFiles(packageFiles(read.pkg), folderFiles(fixture('skill-maker'), ['evals']), 'python-built archive');

    const ours = path.join(root, 'ours.skill');
    writePackageArchive(ours, readPackageDir(copy), 'skill-maker');
    assert.deepEqual(JSON.parse(runPython(LIST_ENTRIES, ours)), JSON.parse(runPython(LIST_ENTRIES, theirs)));
  });

  it('reads an archive with SKILL.md at its root, directory entries, and no modes', () => {
    const flat = zipSync({ 'SKILL.md': SKILL, scripts: { 'run.py': Buffer.from('print(1)\n') } });
    const read = packageFromArchive(flat, '/x/demo-tool.zip');
    assert.equal(read.name, 'demo-tool');
    assert.equal(read.pkg.skill, SKILL.toString());
    assert.deepEqual(read.pkg.files!.get('scripts/run.py'), { kind: 'text', text: 'print(1)\n', mode: 0o644 });
  });

  it("skips macOS's __MACOSX folder and what packing leaves out", () => {
    const zip = zipOf({
      'demo/SKILL.md': SKILL,
      '__MACOSX/demo/._SKILL.md': Buffer.from([0, 5, 22, 7]),
      'demo/scripts/__pycache__/x.pyc': 'x',
      'demo/evals/evals.json': '{}',
    });
    const read = packageFromArchive(zip, 'demo.skill');
    assert.equal(read.name, 'demo');
    assert.equal(read.pkg.files, undefined);
  });

  it('refuses an entry that leaves the package', () => {
    for (const bad of ['demo/../../outside.txt', '/etc/cron.d/evil', 'demo\\..\\..\\evil.txt', 'demo/./x'])
      assertProblem(
        () => packageFromArchive(zipOf({ 'demo/SKILL.md': SKILL, [bad]: 'x' }), 'evil.skill'),
        'path',
        /evil\.skill is refused: the entry '/,
      );
  });

  it('refuses a symlink entry', () => {
    const zip = zipSync({
      'demo/SKILL.md': SKILL,
      'demo/passwd': [Buffer.from('/etc/passwd'), { os: 3, attrs: (0o120777 << 16) >>> 0 }],
    });
    const err = assertProblem(() => packageFromArchive(zip, 'evil.skill'), 'symlink', /'demo\/passwd' is a symlink/);
    assert.equal(err.file, 'evil.skill: demo/passwd');
  });

  it('refuses an entry that inflates past the size it declares (a zip bomb)', () => {
    const honest = zipOf({ 'demo/SKILL.md': SKILL, 'demo/big.txt': Buffer.alloc(8 * 1024 * 1024) });
    const lying = withDeclaredSize(honest, 'demo/big.txt', 1000);
    const err = assertProblem(
      () => packageFromArchive(lying, 'bomb.skill'),
      'zip-bomb',
      /'demo\/big\.txt' inflates to more than the 1,000 bytes it declares/,
    );
    assert.equal(err.file, 'bomb.skill: demo/big.txt');
    // Declaring more than it holds is damage, not a bomb.
    assertProblem(
      () => packageFromArchive(withDeclaredSize(honest, 'demo/big.txt', 9 * 1024 * 1024), 'short.skill'),
      'bad-archive',
      /inflates to 8388608 bytes but declares 9437184/,
    );
  });

  it('refuses by the declared sizes before inflating anything', () => {
    const zip = Buffer.from(zipOf({ 'demo/SKILL.md': SKILL, 'demo/big.bin': Buffer.alloc(3 * 1024 * 1024) }));
    // Garbage in place of the deflated bytes: inflating them would fail as damage instead.
    const entry = layout(zip).find((e) => e.name === 'demo/big.bin')!;
    zip.fill(0xff, entry.local + 30 + 'demo/big.bin'.length + 2, entry.central - 100);
    const limits = { ...DEFAULT_LIMITS, maxFileBytes: 1024 * 1024 };
    assertProblem(
      () => packageFromArchive(zip, 'big.skill', limits),
      'too-large',
      /big\.skill: demo\/big\.bin has 3,145,728 bytes, more than the 1,048,576 a package file may have/,
    );
    const many = zipOf({ 'demo/SKILL.md': SKILL, 'demo/a.txt': 'a'.repeat(600), 'demo/b.txt': 'b'.repeat(600) });
    assertProblem(
      () => packageFromArchive(many, 'many.skill', { ...DEFAULT_LIMITS, maxPackageBytes: 1000 }),
      'too-large',
      /many\.skill holds more than the 1,000 bytes/,
    );
    assertProblem(
      () => packageFromArchive(many, 'many.skill', { ...DEFAULT_LIMITS, maxFiles: 1 }),
      'too-large',
      /many\.skill holds 3 entries, more than the 2 a package's files and folders may have/,
    );
    assertProblem(
      () => packageFromArchive(many, 'many.skill', { ...DEFAULT_LIMITS, maxFiles: 2 }),
      'too-large',
      /many\.skill holds more than the 2 files a package may have/,
    );
  });

  it('refuses entries that share their bytes (an overlapping zip bomb)', () => {
    const zip = Buffer.from(zipOf({ 'demo/SKILL.md': SKILL, 'demo/a.txt': 'aaaa' }));
    const [first, second] = layout(zip);
    const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    // A third central record pointing at the first entry's bytes again.
    const copy = Buffer.from(zip.subarray(first!.central, second!.central));
    const bomb = Buffer.concat([zip.subarray(0, eocd), copy, zip.subarray(eocd)]);
    const end = bomb.length - 22;
    bomb.writeUInt16LE(3, end + 8);
    bomb.writeUInt16LE(3, end + 10);
    bomb.writeUInt32LE(bomb.readUInt32LE(end + 12) + copy.length, end + 12);
    assertProblem(() => packageFromArchive(bomb, 'overlap.skill'), 'zip-bomb', /share their bytes/);
  });

  it('refuses what is not a zip, a damaged entry, an encrypted one', () => {
    assertProblem(
      () => packageFromArchive(Buffer.from('# just text\n'), 'text.skill'),
      'bad-archive',
      /not a zip archive/,
    );
    const stored = Buffer.from(
      zipSync({ 'demo/SKILL.md': [SKILL, { level: 0 }], 'demo/a.txt': [Buffer.from('hello'), { level: 0 }] }),
    );
    const a = layout(stored).find((e) => e.name === 'demo/a.txt')!;
    const at = a.local + 30 + 'demo/a.txt'.length;
    stored.writeUInt8(stored.readUInt8(at) ^ 0x20, at);
    assertProblem(
      () => packageFromArchive(stored, 'crc.skill'),
      'bad-archive',
      /'demo\/a\.txt' does not match its CRC/,
    );
    const locked = Buffer.from(zipOf({ 'demo/SKILL.md': SKILL }));
    const flags = layout(locked)[0]!.central + 8;
    locked.writeUInt16LE(locked.readUInt16LE(flags) | 1, flags);
    assertProblem(() => packageFromArchive(locked, 'locked.skill'), 'bad-archive', /is encrypted/);
  });

  it('refuses an archive without SKILL.md, saying where it looked', () => {
    assertProblem(
      () => packageFromArchive(zipOf({ 'demo/README.md': 'x' }), 'none.skill'),
      'no-skill-md',
      /none\.skill is not a skill archive: it has no SKILL\.md in a single top folder/,
    );
    assertProblem(
      () => packageFromArchive(zipOf({ 'a/SKILL.md': SKILL, 'b/SKILL.md': SKILL }), 'two.skill'),
      'no-skill-md',
      /it holds the folders 'a', 'b'/,
    );
  });

  it('keeps modes from the archive and reads Unicode names', () => {
    const zip = writeZip([
      { name: 'demo/SKILL.md', bytes: SKILL, mode: 0o644 },
      { name: 'demo/scripts/build.sh', bytes: Buffer.from('#!/bin/sh\necho ok\n'), mode: 0o755 },
      { name: 'demo/références/notes.md', bytes: Buffer.from('é\n'), mode: 0o600 },
    ]);
    const files = packageFromArchive(zip, 'demo.skill').pkg.files!;
    assert.equal(files.get('scripts/build.sh')!.mode, 0o755);
    assert.equal(files.get('références/notes.md')!.mode, 0o600);
  });

  it("computes zip's CRC-32", () => {
    // The check value of CRC-32/ISO-HDLC, and the CRC a PNG chunk carries.
    assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
    assert.equal(crc32(new Uint8Array()), 0);
    const png = fs.readFileSync(fixture('poster-design/assets/palette.png'));
    assert.equal(crc32(png.subarray(12, 12 + 4 + 13)), png.readUInt32BE(12 + 4 + 13));
  });
});
