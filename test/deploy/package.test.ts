/**
 * `skillopt deploy` of a package: a run's `best_skill/` written as the whole skill folder, every
 * file byte for byte with its mode, what was there kept and put back byte for byte by a
 * rollback, and a deployed package that was changed since refused without `force`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { deploySkill, rollbackSkill } from '../../src/deploy/deploy.ts';
import { deployStatus } from '../../src/deploy/status.ts';
import { UserError } from '../../src/errors.ts';
import { runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { expectedTree, filesOf, NEW_PACKAGE, OLD_PACKAGE, packageRun, tree, writeTree } from './package-fixture.ts';

const project = () => fs.realpathSync(tmpDir('skillopt-deploy-project-'));
const SKILL_DIR = '.claude/skills/pdf-forms';

/** The part of a tree under `prefix`, relative to it. */
function under(t: Record<string, string> | null, prefix: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(t ?? {})
      .filter(([k]) => k.startsWith(`${prefix}/`) && k !== `${prefix}/`)
      .map(([k, v]) => [k.slice(prefix.length + 1), v]),
  );
}

describe('deploying a package', () => {
  it('replaces the whole folder with the package, byte for byte with modes; a rollback restores the old folder byte for byte', () => {
    const dir = project();
    writeFiles(dir, {
      'README.md': 'mine\n',
      '.claude/skills/other/SKILL.md': '---\nname: other\ndescription: x\n---\n',
    });
    writeTree(path.join(dir, SKILL_DIR), OLD_PACKAGE);
    const before = tree(dir);
    const run = packageRun(NEW_PACKAGE);
    const runBefore = tree(run);

    const r = deploySkill({ run, agent: 'claude', scope: { project: dir } });
    assert.equal(r.kind, 'package');
    assert.equal(r.dir, path.join(dir, SKILL_DIR));
    assert.equal(r.written, true);
    assert.deepEqual(filesOf(tree(r.dir)), expectedTree(NEW_PACKAGE), 'the folder holds exactly the package');
    assert.equal(r.backup, path.join(dir, '.claude/skills/.skillopt-deploy/pdf-forms/0001/previous'));
    assert.deepEqual(tree(r.backup!), under(before, SKILL_DIR), 'the old folder is kept as it was, __pycache__ too');
    // The diff names what changes, and only that.
    assert.match(
      r.diff,
      /--- \S+\/SKILL\.md\n\+\+\+ \S+\/SKILL\.md\n[\s\S]*-Always check the fields first\.\n\+Always check the fields first, then fill the required ones\./,
    );
    assert.match(r.diff, /\+Check boxes take \/Yes or \/Off\./);
    assert.match(r.diff, /--- \(nothing\)\n\+\+\+ \S+\/references\/dates\.md/);
    assert.match(r.diff, /--- \S+\/references\/obsolete\.md\n\+\+\+ \(nothing\)/);
    assert.match(r.diff, /binary file \S+\/assets\/fonts\/Serif\.ttf: 2,000 bytes → 2,100 bytes\n/);
    assert.match(r.diff, /mode of \S+\/scripts\/render\.js: 644 → 755\n/);
    assert.ok(!r.diff.includes('__pycache__'), 'no part of a package, so not in the diff');
    assert.ok(
      r.notes.some((n) => /not carried over .*: scripts\/__pycache__ \(kept with the folder it replaces/.test(n)),
    );
    for (const same of ['LICENSE.txt', 'logo.png', 'notes.md', 'batch.sh', 'check_fields.py '])
      assert.ok(!r.diff.includes(same), same);
    assert.deepEqual(tree(run), runBefore, 'the run is only read');

    const again = deploySkill({ run, agent: 'claude', scope: { project: dir } });
    assert.deepEqual([again.changed, again.written, again.diff], [false, false, '']);

    assert.deepEqual(rollbackSkill({ agent: 'claude', scope: { project: dir } }), {
      file: path.join(dir, SKILL_DIR, 'SKILL.md'),
      action: 'restored',
      remaining: 0,
      dir: path.join(dir, SKILL_DIR),
    });
    assert.deepEqual(tree(dir), before, 'the project is byte for byte as it was, with no journal left');
  });

  it('into a project without the skill, and back out: the project is empty again; a dry run writes nothing', () => {
    const dir = project();
    const run = packageRun(NEW_PACKAGE);
    const dry = deploySkill({ run, agent: 'codex', scope: { project: dir }, dryRun: true });
    assert.deepEqual([dry.kind, dry.changed, dry.written], ['package', true, false]);
    assert.match(
      dry.diff,
      /--- \(nothing\)\n\+\+\+ \S+\/\.agents\/skills\/pdf-forms\/assets\/fonts\/Serif\.ttf|binary file \S+Serif\.ttf: nothing → 2,100 bytes/,
    );
    assert.deepEqual(fs.readdirSync(dir), []);
    const r = deploySkill({ run, agent: 'codex', scope: { project: dir } });
    assert.equal(r.backup, undefined);
    assert.deepEqual(filesOf(tree(r.dir)), expectedTree(NEW_PACKAGE));
    assert.equal(rollbackSkill({ agent: 'codex', scope: { project: dir } }).action, 'removed');
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it('a package changed since it was deployed is refused, naming each change, unless forced; rollbacks then go back one at a time', () => {
    const dir = project();
    const live = path.join(dir, SKILL_DIR);
    writeTree(live, OLD_PACKAGE);
    const original = tree(live);
    deploySkill({ run: packageRun(NEW_PACKAGE), agent: 'claude', scope: { project: dir } });
    // A script the agent ran leaves its cache: that is not an edit.
    writeFiles(live, { 'scripts/__pycache__/check_fields.cpython-312.pyc': 'cache' });
    assert.deepEqual(deployStatus({ agent: 'claude', scope: { project: dir } }).skills[0]!.changes, []);

    fs.appendFileSync(path.join(live, 'references/fields.md'), 'Mine.\n');
    fs.chmodSync(path.join(live, 'scripts/batch.sh'), 0o700);
    fs.writeFileSync(path.join(live, 'references/mine.md'), '# Mine\n');
    fs.rmSync(path.join(live, 'LICENSE.txt'));
    const edited = tree(live);
    const changes = [
      'LICENSE.txt was removed',
      'references/fields.md was edited',
      'references/mine.md was added',
      'scripts/batch.sh changed mode (755 → 700)',
    ];
    assert.deepEqual(deployStatus({ agent: 'claude', scope: { project: dir } }).skills[0]!.changes, changes);
    const next = packageRun({ ...NEW_PACKAGE, 'references/dates.md': '# Dates\n\nISO 8601.\n' });
    assert.throws(
      () => deploySkill({ run: next, agent: 'claude', scope: { project: dir } }),
      (e: Error) =>
        e instanceof UserError &&
        e.message.includes(`${live} was changed since skillopt deployed it`) &&
        e.message.includes(changes.join(', ')) &&
        /deploying over it would lose that\. Use --force/.test(e.message),
    );
    assert.throws(() => rollbackSkill({ agent: 'claude', scope: { project: dir } }), /rolling back would lose that/);
    assert.deepEqual(tree(live), edited, 'refused: nothing changed');
    const dry = deploySkill({ run: next, agent: 'claude', scope: { project: dir }, dryRun: true });
    assert.ok(
      dry.warnings.some((w) => w.includes(changes.join(', '))),
      'a dry run warns instead',
    );

    const forced = deploySkill({ run: next, agent: 'claude', scope: { project: dir }, force: true });
    assert.equal(forced.written, true);
    assert.ok(forced.notes.some((n) => n.includes('deployed over what was changed since')));
    assert.equal(rollbackSkill({ agent: 'claude', scope: { project: dir } }).remaining, 1);
    assert.deepEqual(tree(live), edited, 'the edited folder is back, byte for byte');
    assert.deepEqual(rollbackSkill({ agent: 'claude', scope: { project: dir }, force: true }).action, 'restored');
    assert.deepEqual(tree(live), original);
  });

  it("a package's own SKILL.md is deployed as written; one without front matter gets it; best_skill/ wins over best_skill.md", () => {
    const dir = project();
    const crlf = '---\r\nname: pdf-forms\r\ndescription: Fill PDF forms.\r\n---\r\n\r\n  Rule.  \r\n\r\n';
    const run = packageRun({ ...NEW_PACKAGE, 'SKILL.md': crlf });
    fs.writeFileSync(path.join(run, 'best_skill.md'), 'a different document\n');
    const r = deploySkill({ run, agent: 'agents', scope: { project: dir } });
    assert.equal(fs.readFileSync(r.file, 'utf8'), crlf);
    const bare = packageRun(
      { 'SKILL.md': 'Use the script.\n', 'scripts/run.sh': { data: 'echo hi\n', mode: 0o755 } },
      { env: { name: 'forms' } },
    );
    const b = deploySkill({ run: bare, agent: 'agents', scope: { project: dir }, description: 'Fill forms.' });
    assert.equal(b.name, 'skillopt-forms');
    assert.equal(
      fs.readFileSync(b.file, 'utf8'),
      '---\nname: skillopt-forms\ndescription: "Fill forms."\n---\n\nUse the script.\n',
    );
    assert.equal(fs.statSync(path.join(b.dir, 'scripts/run.sh')).mode & 0o777, 0o755);
    const broken = packageRun(NEW_PACKAGE);
    fs.rmSync(path.join(broken, 'best_skill', 'SKILL.md'));
    assert.throws(
      () => deploySkill({ run: broken, agent: 'agents', scope: { project: dir } }),
      /best_skill is not a skill package: it has no SKILL\.md/,
    );
  });

  it('the command: deploys the folder, --status says whether it still holds what was deployed, --force and --rollback', () => {
    const dir = project();
    writeTree(path.join(dir, SKILL_DIR), OLD_PACKAGE);
    const before = tree(dir);
    const env = { HOME: dir };
    const run = packageRun(NEW_PACKAGE);
    const deployed = runCli(['deploy', run, '--to', 'claude'], { cwd: dir, env });
    assert.equal(deployed.status, 0, deployed.stderr);
    assert.match(deployed.stdout, /binary file \S+Serif\.ttf: 2,000 bytes → 2,100 bytes\n/);
    assert.match(
      deployed.stdout,
      /deployed to \S+\/\.claude\/skills\/pdf-forms\/\nto undo: skillopt deploy --rollback --to claude --project \. --name pdf-forms \(puts the previous folder back\)/,
    );
    const status = runCli(['deploy', '--status', '--to', 'claude'], { cwd: dir, env });
    assert.equal(status.status, 0, status.stderr);
    assert.match(
      status.stdout,
      /pdf-forms: 1 deployment, the last a package from \S+ \([^)]+\); holds what was deployed\n/,
    );
    fs.appendFileSync(path.join(dir, SKILL_DIR, 'references/fields.md'), 'Mine.\n');
    assert.match(
      runCli(['deploy', '--status', '--to', 'claude'], { cwd: dir, env }).stdout,
      /changed since: references\/fields\.md was edited\n/,
    );
    const next = packageRun({ ...NEW_PACKAGE, 'LICENSE.txt': 'MIT\n' });
    const refused = runCli(['deploy', next, '--to', 'claude'], { cwd: dir, env });
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /references\/fields\.md was edited; deploying over it would lose that\. Use --force/);
    const forced = runCli(['deploy', next, '--to', 'claude', '--force'], { cwd: dir, env });
    assert.equal(forced.status, 0, forced.stderr);
    const back = runCli(['deploy', '--rollback', '--to', 'claude'], { cwd: dir, env });
    assert.equal(back.status, 0, back.stderr);
    assert.match(
      back.stdout,
      /restored the previous \S+\/\.claude\/skills\/pdf-forms\n1 earlier deployment of this skill can be rolled back too/,
    );
    assert.equal(runCli(['deploy', '--rollback', '--to', 'claude'], { cwd: dir, env }).status, 2);
    assert.equal(runCli(['deploy', '--rollback', '--to', 'claude', '--force'], { cwd: dir, env }).status, 0);
    assert.deepEqual(tree(dir), before);
  });
});
