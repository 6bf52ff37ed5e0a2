import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DEFAULT_LIMITS, readPackageDir, writePackageDir } from '../../../src/skill/package/folder.ts';
import { packageHash } from '../../../src/skill/package/package.ts';
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

describe('a skill folder', () => {
  for (const name of FIXTURE_NAMES)
    it(`${name} loads byte for byte, modes kept`, () => {
      const pkg = readPackageDir(fixture(name));
      assertSameFiles(packageFiles(pkg), folderFiles(fixture(name), ['evals']), name);
    });

  it('keeps the executable bits git checked out, and tells binaries from text by content', () => {
    const pdf = readPackageDir(fixture('pdf-forms'));
    assert.equal(pdf.files!.get('scripts/extract_layout.py')!.mode, 0o755);
    assert.equal(pdf.files!.get('scripts/fill_fields.py')!.mode & 0o111, 0);
    assert.equal(pdf.files!.get('assets/sample-form.pdf')!.kind, 'binary');
    const poster = readPackageDir(fixture('poster-design'));
    for (const rel of ['canvas-fonts/Tessera-Regular.ttf', 'canvas-fonts/Tessera-Bold.ttf', 'assets/palette.png'])
      assert.equal(poster.files!.get(rel)!.kind, 'binary', rel);
    assert.equal(poster.files!.get('templates/generator.js')!.kind, 'text');
    const maker = readPackageDir(fixture('skill-maker'));
    assert.equal(maker.files!.get('scripts/run_checks.sh')!.mode, 0o755);
    assert.ok(fs.existsSync(path.join(fixture('skill-maker'), 'evals/evals.json')), 'the fixture has evals/');
    assert.ok(![...maker.files!.keys()].some((p) => p.startsWith('evals/')), 'a package leaves evals/ out');
  });

  it('keeps a byte-order mark and CRLF line ends in a text file', () => {
    const csv = readPackageDir(fixture('sheet-tools')).files!.get('assets/example.csv')!;
    assert.equal(csv.kind, 'text');
    assert.ok(csv.kind === 'text' && csv.text.startsWith('\uFEFFregion,') && csv.text.includes('\r\n'));
    const empty = readPackageDir(fixture('sheet-tools')).files!.get('scripts/office/helpers/__init__.py')!;
    assert.deepEqual(empty, { kind: 'text', text: '', mode: 0o644 });
  });

  it('written out and read again, is the same package, byte for byte', () => {
    const root = tmpDir();
    for (const name of FIXTURE_NAMES) {
      const pkg = readPackageDir(fixture(name));
      writePackageDir(path.join(root, name), pkg);
      assertSameFiles(folderFiles(path.join(root, name)), folderFiles(fixture(name), ['evals']), name);
      assert.equal(packageHash(readPackageDir(path.join(root, name))), packageHash(pkg));
    }
  });

  it('leaves out what skill archives leave out, and .git', () => {
    const copy = copyFixture('skill-maker', tmpDir());
    const junk = [
      'scripts/__pycache__/utils.cpython-312.pyc',
      'scripts/stale.pyc',
      '.DS_Store',
      'eval-viewer/node_modules/pkg/index.js',
      '.git/HEAD',
    ];
    for (const rel of junk) {
      fs.mkdirSync(path.dirname(path.join(copy, rel)), { recursive: true });
      fs.writeFileSync(path.join(copy, rel), 'x');
    }
    // Only the root's evals/ is the skill's own; one deeper is content.
    fs.mkdirSync(path.join(copy, 'references/evals'));
    fs.writeFileSync(path.join(copy, 'references/evals/notes.md'), 'kept\n');
    const pkg = readPackageDir(copy);
    for (const rel of junk) assert.ok(!pkg.files!.has(rel), rel);
    assert.ok(pkg.files!.has('references/evals/notes.md'));
  });

  it('follows a symlink that stays inside the folder', () => {
    const copy = copyFixture('pdf-forms', tmpDir());
    fs.symlinkSync('forms.md', path.join(copy, 'FORMS.md'));
    fs.symlinkSync('scripts', path.join(copy, 'tools'));
    const pkg = readPackageDir(copy);
    assert.equal(pkg.files!.get('FORMS.md')!.kind, 'text');
    assert.deepEqual(pkg.files!.get('tools/extract_layout.py'), pkg.files!.get('scripts/extract_layout.py'));
  });

  it('refuses a symlink that leaves the folder, leads nowhere, or loops', () => {
    const root = tmpDir();
    fs.writeFileSync(path.join(root, 'secret.txt'), 'not part of the skill');
    const out = copyFixture('pdf-forms', root, 'out');
    fs.symlinkSync('../../secret.txt', path.join(out, 'scripts/secret.txt'));
    const err = assertProblem(() => readPackageDir(out), 'symlink', /scripts\/secret\.txt is a symlink to .*outside/);
    assert.equal(err.file, path.join(out, 'scripts/secret.txt'));

    const dangling = copyFixture('pdf-forms', root, 'dangling');
    fs.symlinkSync('missing.md', path.join(dangling, 'gone.md'));
    assertProblem(() => readPackageDir(dangling), 'symlink', /gone\.md is a symlink that leads nowhere/);

    const loop = copyFixture('pdf-forms', root, 'loop');
    fs.symlinkSync('..', path.join(loop, 'scripts/up'));
    assertProblem(() => readPackageDir(loop), 'symlink', /scripts\/up is a symlink back to a folder it is in/);
  });

  it('refuses a folder without SKILL.md, naming it', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'README.md'), '# not a skill\n');
    assertProblem(() => readPackageDir(dir), 'no-skill-md', new RegExp(`${dir} is not a skill package`));
    fs.mkdirSync(path.join(dir, 'SKILL.md'));
    assertProblem(() => readPackageDir(dir), 'no-skill-md', /no SKILL\.md file/);
    assertProblem(() => readPackageDir(path.join(dir, 'nowhere')), 'not-found', /is not a folder/);
  });

  it('refuses a file, a package or a file count over the limits, naming the file', () => {
    const copy = copyFixture('pdf-forms', tmpDir());
    const big = path.join(copy, 'assets/huge.bin');
    fs.writeFileSync(big, Buffer.alloc(8193, 1));
    const limits = { ...DEFAULT_LIMITS, maxFileBytes: 8192 };
    const err = assertProblem(
      () => readPackageDir(copy, limits),
      'too-large',
      /huge\.bin has 8,193 bytes, more than the 8,192/,
    );
    assert.equal(err.file, big);
    fs.rmSync(big);
    assertProblem(
      () => readPackageDir(copy, { ...DEFAULT_LIMITS, maxPackageBytes: 10_000 }),
      'too-large',
      /holds more than the 10,000 bytes/,
    );
    assertProblem(() => readPackageDir(copy, { ...DEFAULT_LIMITS, maxFiles: 5 }), 'too-large', /more than the 5 files/);
    assert.doesNotThrow(() => readPackageDir(copy, { ...DEFAULT_LIMITS, maxFiles: 9 }));
  });

  it('refuses a SKILL.md that is not UTF-8', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'SKILL.md'), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0xfe]));
    assertProblem(() => readPackageDir(dir), 'not-text', /SKILL\.md is not UTF-8 text/);
  });

  it('writes no file of a package whose path leaves the folder', () => {
    const dir = path.join(tmpDir(), 'out');
    const pkg = { skill: 'x', files: new Map([['../escaped.txt', { kind: 'text' as const, text: 'x', mode: 0o644 }]]) };
    assertProblem(() => writePackageDir(dir, pkg), 'path', /leaves the package/);
    assert.ok(!fs.existsSync(dir));
  });
});
