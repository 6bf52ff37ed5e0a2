import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { UserError } from '../../src/errors.ts';
import { adopt, pendingDocuments, readReceipt, rollback } from '../../src/sleep/adoption/adopt.ts';
import { readManifest } from '../../src/sleep/staging/staging.ts';
import { snapshot, stagedNight, type StagedDoc } from './staged-night.ts';

const SKILL = '---\nname: depot\n---\n\n# Depot\n\nHand-written.\n';
const DOCS: StagedDoc[] = [
  {
    name: 'depot',
    kind: 'skill',
    file: 'skills/depot/SKILL.md',
    live: SKILL,
    proposed: `${SKILL}\n<!-- learned -->\n`,
    mode: 0o640,
  },
  { name: 'CLAUDE.md', kind: 'memory', file: 'project/new/CLAUDE.md', proposed: '# Notes\n' },
];

const refused = (f: () => unknown, pattern: RegExp) =>
  assert.throws(f, (e: unknown) => e instanceof UserError && pattern.test((e as Error).message));

test('adopt replaces every staged document, keeps a backup of each (byte for byte), writes a receipt; rollback restores exactly, a created file removed with its folders', () => {
  const s = stagedNight(DOCS);
  const before = snapshot(s.paths);
  const result = adopt(s.stateDir, s.night, undefined);
  assert.deepEqual(
    result.adopted.map((a) => a.name),
    ['depot', 'CLAUDE.md'],
  );
  assert.deepEqual(
    snapshot(s.paths),
    [
      { text: DOCS[0]!.proposed, mode: 0o640 },
      { text: '# Notes\n', mode: 0o644 },
    ],
    'the mode of a replaced file is kept',
  );
  assert.equal(fs.readFileSync(path.join(s.night, 'backup', 'skill-depot.md'), 'utf8'), SKILL);
  const [entry] = readReceipt(s.night).adoptions;
  assert.deepEqual(
    entry!.documents.map((d) => [d.name, d.backup, d.created_dirs.map((x) => path.relative(s.root, x))]),
    [
      ['depot', 'backup/skill-depot.md', []],
      ['CLAUDE.md', '', ['project', 'project/new']],
    ],
  );
  assert.deepEqual(pendingDocuments(s.night), []);
  refused(() => adopt(s.stateDir, s.night, undefined), /adopted already/);
  assert.ok(!fs.existsSync(path.join(s.stateDir, 'adopt.journal.json')), 'the journal is gone once committed');

  const back = rollback(s.stateDir, undefined);
  assert.deepEqual(
    back.restored.map((r) => [r.name, r.removed]),
    [
      ['depot', false],
      ['CLAUDE.md', true],
    ],
  );
  assert.deepEqual(snapshot(s.paths), before);
  assert.ok(!fs.existsSync(path.join(s.root, 'project')), 'the folders the adoption created are gone');
  assert.ok(readReceipt(s.night).adoptions[0]!.rolled_back);
  refused(() => rollback(s.stateDir, undefined), /no adoption to roll back/);
  assert.equal(pendingDocuments(s.night).length, 2, 'after a rollback the night can be adopted again');
});

test('a document edited since the night read it is never overwritten: the whole adoption is refused, nothing changes', () => {
  const s = stagedNight(DOCS);
  fs.appendFileSync(s.paths[0]!, 'my own edit\n');
  const before = snapshot(s.paths);
  refused(
    () => adopt(s.stateDir, s.night, undefined),
    /nothing adopted:\n {2}.*skills\/depot\/SKILL\.md \(depot\) was edited since the night read it; it is left as it is/,
  );
  assert.deepEqual(snapshot(s.paths), before);
  assert.ok(!fs.existsSync(path.join(s.night, 'backup')));
  assert.deepEqual(readReceipt(s.night).adoptions, []);

  const created = stagedNight(DOCS);
  fs.mkdirSync(path.dirname(created.paths[1]!), { recursive: true });
  fs.writeFileSync(created.paths[1]!, 'written meanwhile\n');
  refused(
    () => adopt(created.stateDir, created.night, undefined),
    /CLAUDE\.md \(CLAUDE\.md\) was created since the night read it/,
  );
});

test('a link in place of the file, a changed proposal, or a hard-linked file refuse the adoption', () => {
  const link = stagedNight(DOCS);
  fs.renameSync(link.paths[0]!, `${link.paths[0]}.real`);
  fs.symlinkSync(`${link.paths[0]}.real`, link.paths[0]!);
  refused(() => adopt(link.stateDir, link.night, undefined), /is a symbolic link/);

  const tampered = stagedNight(DOCS);
  fs.appendFileSync(path.join(tampered.night, readManifest(tampered.night).documents[0]!.proposed_file), 'injected\n');
  refused(() => adopt(tampered.stateDir, tampered.night, undefined), /is not the file the night staged/);

  const linked = stagedNight(DOCS);
  fs.linkSync(linked.paths[0]!, path.join(linked.root, 'other-name.md'));
  refused(() => adopt(linked.stateDir, linked.night, undefined), /has other hard links/);
});

test('all or nothing: a failure while replacing the second document puts the first one back', () => {
  const s = stagedNight(DOCS);
  const before = snapshot(s.paths);
  // The disk fails as the second file is put in place (after the first one was replaced).
  const rename = fs.renameSync;
  fs.renameSync = ((from: fs.PathLike, to: fs.PathLike) => {
    if (String(to) === s.paths[1]) throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
    return rename(from, to);
  }) as typeof fs.renameSync;
  try {
    assert.throws(() => adopt(s.stateDir, s.night, undefined), /EIO/);
  } finally {
    fs.renameSync = rename;
  }
  assert.deepEqual(snapshot(s.paths), before);
  assert.ok(!fs.existsSync(path.join(s.night, 'backup', 'skill-depot.md')), 'its backup is removed too');
  assert.ok(!fs.existsSync(path.join(s.root, 'project')), 'and the folders it made');
  assert.ok(!fs.existsSync(path.join(s.stateDir, 'adopt.journal.json')));
  assert.deepEqual(readReceipt(s.night).adoptions, []);
});

test('--skill adopts only the named documents; an unknown name is refused; a rollback after the file changed is refused', () => {
  const s = stagedNight(DOCS);
  refused(() => adopt(s.stateDir, s.night, ['nope']), /staged no document 'nope'; it staged: depot, CLAUDE\.md/);
  adopt(s.stateDir, s.night, ['CLAUDE.md']);
  assert.deepEqual(
    snapshot(s.paths).map((x) => x?.text ?? null),
    [SKILL, '# Notes\n'],
  );
  assert.deepEqual(
    pendingDocuments(s.night).map((d) => d.name),
    ['depot'],
  );
  fs.writeFileSync(s.paths[1]!, '# Notes\nedited after adoption\n');
  refused(() => rollback(s.stateDir, s.night), /changed since it was adopted; it is left as it is/);
  assert.equal(fs.readFileSync(s.paths[1]!, 'utf8'), '# Notes\nedited after adoption\n');
});
