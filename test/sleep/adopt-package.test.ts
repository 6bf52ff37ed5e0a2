/**
 * Sleep's adoption of a skill package: only the files that differ are changed (bytes and modes),
 * each one replaced or removed kept in the night's backup, and a rollback puts every one back
 * byte for byte; a package changed since the night read it, or since it was adopted, is left
 * alone, the refusal naming each change.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { UserError } from '../../src/errors.ts';
import { adopt, readReceipt, rollback } from '../../src/sleep/adoption/adopt.ts';
import { readManifest } from '../../src/sleep/staging/staging.ts';
import { expectedTree, filesOf, NEW_PACKAGE, OLD_PACKAGE, type Tree, tree } from '../deploy/package-fixture.ts';
import { MEMORY, stagedPackageNight } from './staged-package.ts';

const PROPOSED: Tree = { ...NEW_PACKAGE, 'templates/letter/form.txt': 'Dear {name},\n' };
const PYC = 'scripts/__pycache__/check_fields.cpython-312.pyc';

const refused = (f: () => unknown, pattern: RegExp) =>
  assert.throws(f, (e: unknown) => e instanceof UserError && pattern.test((e as Error).message));

test('adopting a package changes only what differs, keeps what it replaces, and a rollback restores the folder byte for byte', () => {
  const s = stagedPackageNight(OLD_PACKAGE, PROPOSED);
  const before = tree(s.liveDir);
  const doc = readManifest(s.night).documents[0]!;
  assert.equal(doc.package?.proposed_dir, 'proposed/skill-pdf-forms');
  assert.equal(doc.proposed_file, 'proposed/skill-pdf-forms/SKILL.md');

  const result = adopt(s.stateDir, s.night, undefined);
  assert.deepEqual(
    result.adopted.map((a) => [a.name, path.relative(s.night, a.backup)]),
    [
      ['pdf-forms', 'backup/skill-pdf-forms/SKILL.md'],
      ['CLAUDE.md', 'backup/memory-CLAUDE.md.md'],
    ],
  );
  // The package as proposed, and what is no part of a package left as it was.
  assert.deepEqual(filesOf(tree(s.liveDir)), expectedTree({ ...PROPOSED, [PYC]: OLD_PACKAGE[PYC]! }));
  assert.equal(fs.readFileSync(s.memory, 'utf8'), MEMORY.proposed);
  const [entry] = readReceipt(s.night).adoptions;
  const files = entry!.documents[0]!.package!.files;
  assert.deepEqual(
    files.map((f) => [f.path, f.backup, f.mode_before, f.mode_after]),
    [
      ['SKILL.md', 'backup/skill-pdf-forms/SKILL.md', 0o644, 0o644],
      ['assets/fonts/Serif.ttf', 'backup/skill-pdf-forms/assets/fonts/Serif.ttf', 0o644, 0o644],
      ['references/dates.md', '', null, 0o644],
      ['references/fields.md', 'backup/skill-pdf-forms/references/fields.md', 0o644, 0o644],
      ['references/obsolete.md', 'backup/skill-pdf-forms/references/obsolete.md', 0o644, null],
      ['scripts/render.js', 'backup/skill-pdf-forms/scripts/render.js', 0o644, 0o755],
      ['templates/letter/form.txt', '', null, 0o644],
    ],
    'unchanged files (LICENSE.txt, the logo, the other scripts) are not touched',
  );
  assert.deepEqual(
    files.find((f) => f.path === 'templates/letter/form.txt')!.created_dirs.map((d) => path.relative(s.liveDir, d)),
    ['templates', 'templates/letter'],
  );
  assert.deepEqual(
    fs.readFileSync(path.join(s.night, 'backup/skill-pdf-forms/assets/fonts/Serif.ttf')),
    OLD_PACKAGE['assets/fonts/Serif.ttf'],
    'a binary file is kept byte for byte',
  );

  const back = rollback(s.stateDir, undefined);
  assert.deepEqual(
    back.restored.map((r) => [r.name, r.removed]),
    [
      ['pdf-forms', false],
      ['CLAUDE.md', false],
    ],
  );
  assert.deepEqual(tree(s.liveDir), before, 'every file, mode and folder as it was; the folders it made are gone');
  assert.equal(fs.readFileSync(s.memory, 'utf8'), MEMORY.live);
});

test('a package changed since the night read it is left alone, each change named; so is one whose proposal was altered', () => {
  const s = stagedPackageNight(OLD_PACKAGE, PROPOSED);
  fs.appendFileSync(path.join(s.liveDir, 'references/deep/notes.md'), 'Mine.\n');
  fs.chmodSync(path.join(s.liveDir, 'scripts/batch.sh'), 0o700);
  fs.writeFileSync(path.join(s.liveDir, 'references/mine.md'), '# Mine\n');
  // A cache a script left is no part of the package: it does not count.
  fs.writeFileSync(path.join(s.liveDir, PYC), 'new cache');
  const edited = tree(path.join(s.root, 'skills'));
  refused(
    () => adopt(s.stateDir, s.night, undefined),
    /skills\/pdf-forms \(pdf-forms\) was changed since the night read it: references\/deep\/notes\.md was edited, references\/mine\.md was added, scripts\/batch\.sh changed mode \(755 → 700\); it is left as it is/,
  );
  assert.deepEqual(tree(path.join(s.root, 'skills')), edited, 'nothing changed');
  assert.equal(fs.readFileSync(s.memory, 'utf8'), MEMORY.live, 'the memory file neither');

  const t = stagedPackageNight(OLD_PACKAGE, PROPOSED);
  fs.writeFileSync(path.join(t.night, 'proposed/skill-pdf-forms/scripts/batch.sh'), 'rm -rf ~\n');
  refused(
    () => adopt(t.stateDir, t.night, undefined),
    /proposed\/skill-pdf-forms is not the package the night staged: scripts\/batch\.sh was edited/,
  );
  assert.deepEqual(filesOf(tree(t.liveDir)), expectedTree(OLD_PACKAGE));
});

test('a rollback after a file of the adopted package changed is refused, naming it, and changes nothing', () => {
  const s = stagedPackageNight(OLD_PACKAGE, PROPOSED);
  adopt(s.stateDir, s.night, undefined);
  fs.chmodSync(path.join(s.liveDir, 'scripts/render.js'), 0o644);
  const now = tree(s.liveDir);
  refused(() => rollback(s.stateDir, undefined), /scripts\/render\.js \(pdf-forms\) changed since it was adopted/);
  assert.deepEqual(tree(s.liveDir), now);
  assert.equal(fs.readFileSync(s.memory, 'utf8'), MEMORY.proposed);
  fs.chmodSync(path.join(s.liveDir, 'scripts/render.js'), 0o755);
  rollback(s.stateDir, undefined);
  assert.deepEqual(filesOf(tree(s.liveDir)), expectedTree(OLD_PACKAGE));
});
