import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadSkill } from '../../../src/skill/document.ts';
import { writePackageArchive } from '../../../src/skill/package/archive.ts';
import { readPackageDir } from '../../../src/skill/package/folder.ts';
import { packageHash } from '../../../src/skill/package/package.ts';
import { loadSkillPackage, parseInstalledSpec } from '../../../src/skill/package/source.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { assertProblem, assertSameFiles, copyFixture, fixture, folderFiles, packageFiles } from './helpers.ts';

const messageOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error');
};

describe('a Markdown skill', () => {
  it('reads as loadSkill reads it: a package of one document, front matter or not', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'dates.md');
    fs.writeFileSync(file, '\uFEFF# Dates\r\nUse ISO dates.\n');
    const loaded = loadSkillPackage(file);
    assert.deepEqual(loaded, {
      pkg: { skill: loadSkill(file) },
      source: { kind: 'document', path: file, blank: false },
    });
    // A SKILL.md named as a file is a single document too, with no front-matter rules.
    const skillMd = path.join(dir, 'SKILL.md');
    fs.writeFileSync(skillMd, '---\nname: Not_Kebab\n---\nbody\n');
    assert.deepEqual(loadSkillPackage(skillMd).pkg, { skill: loadSkill(skillMd) });
  });

  it('fails, or starts blank, exactly as loadSkill does', () => {
    const missing = path.join(tmpDir(), 'missing.md');
    for (const options of [{}, { key: '--skill' }, { key: 'env.skill_init' }]) {
      assert.equal(
        messageOf(() => loadSkillPackage(missing, options)),
        messageOf(() => loadSkill(missing, options)),
      );
      assert.equal(
        messageOf(() => loadSkillPackage('', options)),
        messageOf(() => loadSkill('', options)),
      );
    }
    assert.deepEqual(loadSkillPackage(missing, { startBlank: true }), {
      pkg: { skill: '' },
      source: { kind: 'document', path: missing, blank: true },
    });
    assert.equal(loadSkillPackage('', { startBlank: true }).pkg.skill, '');
  });

  it('is found from the working directory, then from the base folder, as config paths are', () => {
    const base = tmpDir();
    fs.writeFileSync(path.join(base, 'only-here.md'), 'from the base folder\n');
    const loaded = loadSkillPackage('only-here.md', { baseDir: base });
    assert.equal(loaded.pkg.skill, 'from the base folder\n');
    assert.equal(loaded.source.path, path.join(base, 'only-here.md'));
  });
});

describe('a skill package', () => {
  it('is read from a folder, whole', () => {
    const loaded = loadSkillPackage(fixture('pdf-forms'));
    assert.deepEqual(loaded.source, { kind: 'folder', path: fixture('pdf-forms') });
    assertSameFiles(packageFiles(loaded.pkg), folderFiles(fixture('pdf-forms')), 'folder');
  });

  it('is read from a .skill or .zip archive', () => {
    const dir = tmpDir();
    const pkg = readPackageDir(fixture('sheet-tools'));
    for (const file of [path.join(dir, 'sheet-tools.skill'), path.join(dir, 'Sheet-Tools.ZIP')]) {
      writePackageArchive(file, pkg, 'sheet-tools');
      const loaded = loadSkillPackage(file);
      assert.deepEqual(loaded.source, { kind: 'archive', path: file, name: 'sheet-tools' });
      assert.equal(packageHash(loaded.pkg), packageHash(pkg));
    }
  });

  it('is held to the front-matter rules, the error naming its SKILL.md and the rule', () => {
    const root = tmpDir();
    const copy = copyFixture('poster-design', root);
    const skillMd = path.join(copy, 'SKILL.md');
    fs.writeFileSync(skillMd, fs.readFileSync(skillMd, 'utf8').replace('name: poster-design', 'name: Poster_Design'));
    const err = assertProblem(
      () => loadSkillPackage(copy, { key: '--skill' }),
      'front-matter',
      /SKILL\.md breaks the Agent Skills rules for front matter: the skill name 'Poster_Design' holds other characters.*\(from --skill\)$/,
    );
    assert.equal(err.file, skillMd);

    const archive = path.join(root, 'poster.skill');
    const bad = readPackageDir(copy);
    writePackageArchive(archive, { ...bad, skill: bad.skill.replace(/^license: .*\n/m, 'version: 3\n') }, 'poster');
    assertProblem(
      () => loadSkillPackage(archive),
      'front-matter',
      /poster\.skill: poster\/SKILL\.md breaks the Agent Skills rules for front matter: .*'version'.*allow only/,
    );
    fs.writeFileSync(skillMd, '# no front matter\n');
    assertProblem(() => loadSkillPackage(copy), 'front-matter', /no front matter/);
  });

  it('in a folder without SKILL.md, or with a symlink out, is refused with the key named', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'notes.md'), 'x');
    assertProblem(() => loadSkillPackage(dir, { key: 'env.skill_init' }), 'no-skill-md', /\(from env\.skill_init\)$/);
    const copy = copyFixture('pdf-forms', dir);
    fs.symlinkSync(path.join(dir, 'notes.md'), path.join(copy, 'notes.md'));
    assertProblem(
      () => loadSkillPackage(copy, { key: '--skill' }),
      'symlink',
      /outside the skill folder.*\(from --skill\)$/,
    );
  });
});

describe('an installed skill', () => {
  /** A project and a home, each with the agents' skill folders holding fixture copies. */
  function places() {
    const project = tmpDir('skillopt-project-');
    const home = tmpDir('skillopt-user-');
    const install = (base: string, skillsDir: string, name: string, as = name) => {
      fs.mkdirSync(path.join(base, skillsDir), { recursive: true });
      return copyFixture(name, path.join(base, skillsDir), as);
    };
    const projectPdf = install(project, '.claude/skills', 'pdf-forms');
    fs.appendFileSync(path.join(projectPdf, 'SKILL.md'), '\nThe project copy.\n');
    install(home, '.claude/skills', 'pdf-forms');
    install(home, '.claude/skills', 'poster-design');
    install(project, '.agents/skills', 'skill-maker');
    install(project, '.github/skills', 'sheet-tools');
    install(home, 'codex-home/skills', 'sheet-tools');
    return { project, home, env: { HOME: home, CODEX_HOME: path.join(home, 'codex-home') } };
  }

  it('is looked for in the project first, then in the home', () => {
    const { project, home, env } = places();
    const options = { project, env };
    const inProject = loadSkillPackage('claude:pdf-forms', options);
    assert.deepEqual(inProject.source, {
      kind: 'installed',
      path: path.join(project, '.claude/skills/pdf-forms'),
      agent: 'claude',
      scope: 'project',
      name: 'pdf-forms',
    });
    assert.match(inProject.pkg.skill, /The project copy\.\n$/);
    const inHome = loadSkillPackage('claude:poster-design', options);
    assert.equal(inHome.source.kind === 'installed' && inHome.source.scope, 'user');
    assertSameFiles(packageFiles(inHome.pkg), folderFiles(fixture('poster-design')), 'installed');
    const userOnly = loadSkillPackage('user:claude:pdf-forms', options);
    assert.equal(userOnly.source.path, path.join(home, '.claude/skills/pdf-forms'));
    assert.doesNotMatch(userOnly.pkg.skill, /The project copy/);
  });

  it("is looked for in each agent's own folders", () => {
    const { project, home, env } = places();
    const options = { project, env };
    assert.equal(
      loadSkillPackage('agents:skill-maker', options).source.path,
      path.join(project, '.agents/skills/skill-maker'),
    );
    assert.equal(
      loadSkillPackage('copilot:sheet-tools', options).source.path,
      path.join(project, '.github/skills/sheet-tools'),
    );
    assert.equal(
      loadSkillPackage('user:codex:sheet-tools', options).source.path,
      path.join(home, 'codex-home/skills/sheet-tools'),
    );
    const moved = { project, env: { HOME: '/nowhere', CLAUDE_CONFIG_DIR: path.join(home, '.claude') } };
    assert.equal(
      loadSkillPackage('user:claude:poster-design', moved).source.path,
      path.join(home, '.claude/skills/poster-design'),
    );
  });

  it('that is not there is an error naming every place looked in', () => {
    const { project, home, env } = places();
    const err = assertProblem(
      () => loadSkillPackage('claude:docx', { project, env }),
      'not-found',
      /no installed skill 'docx' for claude: looked for .* and .*/,
    );
    assert.ok(err.message.includes(path.join(project, '.claude/skills/docx')));
    assert.ok(err.message.includes(path.join(home, '.claude/skills/docx')));
    assertProblem(
      () => loadSkillPackage('project:claude:poster-design', { project, env, key: '--skill' }),
      'not-found',
      /looked for [^ ]*\/\.claude\/skills\/poster-design \(from --skill\)$/,
    );
  });

  it('is held to the front-matter rules like any package', () => {
    const { project, env } = places();
    const skillMd = path.join(project, '.claude/skills/pdf-forms/SKILL.md');
    fs.writeFileSync(skillMd, fs.readFileSync(skillMd, 'utf8').replace(/^description: .*$/m, 'description: use <b>'));
    const err = assertProblem(
      () => loadSkillPackage('claude:pdf-forms', { project, env }),
      'front-matter',
      /'<' or '>'/,
    );
    assert.equal(err.file, skillMd);
  });

  it('is named by AGENT:NAME with an optional scope; anything else is a path', () => {
    assert.deepEqual(parseInstalledSpec('claude:pdf'), { agent: 'claude', name: 'pdf' });
    assert.deepEqual(parseInstalledSpec('user:codex:my-skill'), { agent: 'codex', scope: 'user', name: 'my-skill' });
    assert.deepEqual(parseInstalledSpec('project:cursor:x'), { agent: 'cursor', scope: 'project', name: 'x' });
    for (const spec of [
      './claude:pdf',
      'claude:a/b',
      'claude:..',
      'gemini:pdf',
      'team:claude:pdf',
      'claude:',
      'skill.md',
    ])
      assert.equal(parseInstalledSpec(spec), undefined, spec);
    const file = path.join(tmpDir(), 'claude:pdf');
    fs.writeFileSync(file, '# a file with a colon in its name\n');
    assert.equal(loadSkillPackage(file).source.kind, 'document');
  });
});
