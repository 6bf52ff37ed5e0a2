/**
 * A night over a skill that is a package (its folder holds a reference, a script and a binary
 * asset): the night replays under the whole package, stages the folder whole with every file
 * pinned, adoption changes only SKILL.md and keeps the rest byte for byte with their modes,
 * rollback restores the folder; a proposal that breaks the package is not taken.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SleepConfigSchema } from '../../src/sleep/config.ts';
import { managedSkillPath } from '../../src/sleep/documents/documents.ts';
import { brokenProposal, livePackage } from '../../src/sleep/documents/package-skill.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { contents } from './fixture-home.ts';
import { PROJECT, simNightHome } from './sim-night.ts';

const LOGO = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

function packageHome() {
  const h = simNightHome('mine:\n  seed: 3\ndocuments:\n  fanout: true\n');
  const skill = path.join(h.home, '.claude/skills/depot-records');
  writeFiles(skill, {
    'references/sites.md': '# Sites\n\nEvery depot has a site code.\n',
    'scripts/lookup.sh': '#!/bin/sh\necho "site $1"\n',
  });
  fs.chmodSync(path.join(skill, 'scripts/lookup.sh'), 0o755);
  fs.mkdirSync(path.join(skill, 'assets'));
  fs.writeFileSync(path.join(skill, 'assets/logo.png'), LOGO);
  return { ...h, skill };
}

describe('a night over a skill package', () => {
  it('stages the folder whole; adoption changes SKILL.md alone; rollback restores every file', () => {
    const { home, sleep, skill } = packageHome();
    const original = contents(skill);
    const run = sleep('run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'sim');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /skill depot-records: accept_new_best/);
    assert.deepEqual(contents(skill), original, 'a night changes nothing live');
    const nights = path.join(home, '.skillopt-sleep/nights');
    const night = path.join(nights, fs.readdirSync(nights)[0]!);
    const manifest = JSON.parse(fs.readFileSync(path.join(night, 'manifest.json'), 'utf8'));
    const doc = manifest.documents.find((d: { name: string }) => d.name === 'depot-records');
    assert.ok(doc.package, 'staged as a package');
    assert.deepEqual(Object.keys(doc.package.live_files).sort(), [
      'SKILL.md',
      'assets/logo.png',
      'references/sites.md',
      'scripts/lookup.sh',
    ]);
    const proposed = path.join(night, doc.package.proposed_dir);
    const staged = contents(proposed);
    for (const rel of ['assets/logo.png', 'references/sites.md', 'scripts/lookup.sh'])
      assert.equal(staged[rel], original[rel], `${rel} carried byte for byte with its mode`);
    assert.notEqual(staged['SKILL.md'], original['SKILL.md']);

    const adopted = sleep('adopt', '--project', PROJECT);
    assert.equal(adopted.status, 0, adopted.stderr);
    const after = contents(skill);
    assert.equal(after['SKILL.md'], staged['SKILL.md']);
    for (const rel of ['assets/logo.png', 'references/sites.md', 'scripts/lookup.sh'])
      assert.equal(after[rel], original[rel]);

    const back = sleep('rollback');
    assert.equal(back.status, 0, back.stderr);
    assert.deepEqual(contents(skill), original, 'the folder as it was, byte for byte and mode');
  });

  it('a proposal whose SKILL.md links to a file that is not there breaks the package', async () => {
    const dir = path.join(tmpDir(), 'charts');
    const skill = '---\nname: charts\ndescription: Build charts.\n---\n\nSee [the styles](references/styles.md).\n';
    writeFiles(dir, { 'SKILL.md': skill, 'references/styles.md': '# Styles\n' });
    const live = livePackage(path.join(dir, 'SKILL.md'))!;
    assert.deepEqual([...live.files.keys()], ['references/styles.md']);
    assert.equal(
      await brokenProposal(live, skill, `${skill}\nAlso read [colours](references/colours.md).\n`).then((r) =>
        /colours\.md/.test(r ?? ''),
      ),
      true,
    );
    assert.equal(await brokenProposal(live, skill, `${skill}\n- Label both axes.\n`), undefined);
    fs.rmSync(path.join(dir, 'references'), { recursive: true });
    assert.equal(livePackage(path.join(dir, 'SKILL.md')), undefined, 'a SKILL.md alone is a single document');
  });

  it('documents.skill takes a SKILL.md, its folder or an installed skill; an archive is refused', () => {
    const project = tmpDir();
    writeFiles(project, {
      '.claude/skills/charts/SKILL.md': '---\nname: charts\ndescription: x\n---\n',
      'x.skill': 'PK',
    });
    const at = (skill: string) =>
      managedSkillPath(SleepConfigSchema.parse({ documents: { skill } }), path.join(project, 'home'), project);
    const md = path.join(project, '.claude/skills/charts/SKILL.md');
    assert.equal(at('.claude/skills/charts/SKILL.md'), md);
    assert.equal(at('.claude/skills/charts'), md);
    assert.equal(at('claude:charts'), md);
    assert.throws(() => at('codex:charts'), /documents\.skill: no installed skill 'charts' for codex/);
    assert.throws(() => at('x.skill'), /is an archive; Sleep adopts its proposals into a live skill/);
  });
});
