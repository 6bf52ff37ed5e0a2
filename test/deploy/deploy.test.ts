/**
 * `skillopt deploy`: a run's best skill written where each agent reads skills, with its front
 * matter, the diff shown first, the replaced file kept, and `--rollback` putting back exactly
 * what was there. Every test works in temporary projects and homes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { deploySkill, rollbackSkill } from '../../src/deploy/deploy.ts';
import { DEPLOY_AGENTS, type DeployAgent } from '../../src/deploy/agents.ts';
import { UserError } from '../../src/errors.ts';
import { runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

/** A finished run's files, as `skillopt train` leaves them. */
function fakeRun(skill: string, config: Record<string, unknown> = { env: { name: 'searchqa' } }): string {
  const run = tmpDir('skillopt-deploy-run-');
  writeFiles(run, { 'best_skill.md': skill, 'config.json': JSON.stringify({ config }) });
  return run;
}

/** Every file and folder under `dir` with its bytes and mode (folders: null). */
function snapshot(dir: string): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const rel of (fs.readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const abs = path.join(dir, rel);
    const st = fs.statSync(abs);
    out[rel] = st.isDirectory() ? null : `${(st.mode & 0o7777).toString(8)}:${fs.readFileSync(abs, 'base64')}`;
  }
  return out;
}

const PROJECT_FOLDER: Record<DeployAgent, string> = {
  claude: '.claude/skills',
  codex: '.agents/skills',
  copilot: '.github/skills',
  cursor: '.cursor/skills',
  agents: '.agents/skills',
};

describe('deploy', () => {
  it("writes best_skill.md as <name>/SKILL.md in each agent's project folder, with name and description, after a diff from nothing", () => {
    const run = fakeRun('Answer in lower case.\n');
    for (const agent of DEPLOY_AGENTS) {
      const project = tmpDir();
      const r = deploySkill({ run, agent, scope: { project }, description: 'Use for trivia questions.' });
      const file = path.join(project, PROJECT_FOLDER[agent], 'skillopt-searchqa', 'SKILL.md');
      assert.equal(r.file, file, agent);
      assert.equal(
        fs.readFileSync(file, 'utf8'),
        '---\nname: skillopt-searchqa\ndescription: "Use for trivia questions."\n---\n\nAnswer in lower case.\n',
      );
      assert.match(r.diff, /--- \(nothing\)\n\+\+\+ .*SKILL\.md\n@@ -0,0 \+1,6 @@\n\+---\n\+name: skillopt-searchqa/);
      assert.equal(r.written, true);
    }
  });

  it("--user writes into each agent's own home (moved by its variable where it has one), and nowhere else", () => {
    const run = fakeRun('Be brief.\n');
    const home = tmpDir();
    const moved = tmpDir();
    const expected: Record<DeployAgent, string> = {
      claude: path.join(moved, 'claude/skills'),
      codex: path.join(home, '.codex/skills'),
      copilot: path.join(home, '.copilot/skills'),
      cursor: path.join(home, '.cursor/skills'),
      agents: path.join(home, '.agents/skills'),
    };
    for (const agent of DEPLOY_AGENTS) {
      const r = deploySkill({
        run,
        agent,
        scope: { user: true },
        env: { HOME: home, CLAUDE_CONFIG_DIR: path.join(moved, 'claude') },
      });
      assert.equal(r.file, path.join(expected[agent], 'skillopt-searchqa', 'SKILL.md'), agent);
      assert.ok(fs.existsSync(r.file));
    }
    assert.equal(
      deploySkill({
        run,
        agent: 'codex',
        scope: { user: true },
        env: { HOME: home, CODEX_HOME: path.join(moved, 'codex') },
      }).file,
      path.join(moved, 'codex/skills/skillopt-searchqa/SKILL.md'),
    );
  });

  it('a redeploy shows the diff and keeps the file it replaces; rollback restores it byte for byte with its mode, then removes what the first deployment created', () => {
    const project = tmpDir();
    // The project already has files of its own, and a skill folder with another skill.
    writeFiles(project, {
      'README.md': 'mine\n',
      '.claude/skills/other/SKILL.md': '---\nname: other\ndescription: x\n---\nother\n',
    });
    const before = snapshot(project);
    const first = deploySkill({
      run: fakeRun('Rule one.\n'),
      agent: 'claude',
      scope: { project },
      name: 'house-rules',
      description: 'House rules.',
    });
    // The user edits the deployed file by hand (CRLF, a mode of their own), then a new run is deployed over it.
    fs.writeFileSync(first.file, '---\r\nname: house-rules\r\ndescription: mine\r\n---\r\nRule one, edited.\r\n');
    fs.chmodSync(first.file, 0o600);
    const edited = snapshot(project);
    const second = deploySkill({
      run: fakeRun('Rule two.\n'),
      agent: 'claude',
      scope: { project },
      name: 'house-rules',
      description: 'House rules.',
    });
    assert.match(second.diff, /-Rule one, edited\.\r?\n[\s\S]*\+Rule two\./);
    assert.ok(second.backup && fs.readFileSync(second.backup, 'utf8').includes('Rule one, edited.'));
    assert.equal(fs.readFileSync(second.file, 'utf8').endsWith('Rule two.\n'), true);

    assert.deepEqual(rollbackSkill({ agent: 'claude', scope: { project } }), {
      file: second.file,
      action: 'restored',
      remaining: 1,
    });
    assert.deepEqual(snapshot(project), edited);
    // The hand edit is not what the first deployment wrote: its rollback is refused, then forced.
    assert.throws(
      () => rollbackSkill({ agent: 'claude', scope: { project }, name: 'house-rules' }),
      (e: Error) => e instanceof UserError && /was changed since skillopt deployed it.*--force/.test(e.message),
    );
    assert.deepEqual(rollbackSkill({ agent: 'claude', scope: { project }, name: 'house-rules', force: true }), {
      file: first.file,
      action: 'removed',
      remaining: 0,
    });
    assert.deepEqual(snapshot(project), before);
    assert.throws(() => rollbackSkill({ agent: 'claude', scope: { project } }), /nothing to roll back/);
  });

  it('deploying into an empty project and rolling back leaves it empty; the same skill again writes nothing', () => {
    const project = tmpDir();
    const run = fakeRun('Rule.\n');
    const r = deploySkill({ run, agent: 'cursor', scope: { project } });
    assert.ok(r.notes.some((n) => /description is a default/.test(n)));
    const again = deploySkill({ run, agent: 'cursor', scope: { project } });
    assert.deepEqual([again.changed, again.written, again.diff], [false, false, '']);
    rollbackSkill({ agent: 'cursor', scope: { project } });
    assert.deepEqual(fs.readdirSync(project), []);
    const dry = deploySkill({ run, agent: 'cursor', scope: { project }, dryRun: true });
    assert.ok(dry.diff && !dry.written);
    assert.deepEqual(fs.readdirSync(project), []);
  });

  it('a skill with its own front matter keeps it; a name that disagrees, a bad name or a run without best_skill.md is refused', () => {
    const own = '---\nname: ticket-triage\ndescription: Route support tickets.\n---\n\nRoute by product.\n';
    const project = tmpDir();
    const r = deploySkill({ run: fakeRun(own), agent: 'agents', scope: { project } });
    assert.equal(r.file, path.join(project, '.agents/skills/ticket-triage/SKILL.md'));
    assert.equal(fs.readFileSync(r.file, 'utf8'), own);
    assert.throws(
      () => deploySkill({ run: fakeRun(own), agent: 'agents', scope: { project }, name: 'other' }),
      /--name other: the skill's front matter names it 'ticket-triage'/,
    );
    assert.throws(
      () => deploySkill({ run: fakeRun('x'), agent: 'agents', scope: { project }, name: 'My Skill' }),
      /--name: the skill name 'My Skill' must be lower-case/,
    );
    assert.throws(
      () => deploySkill({ run: tmpDir(), agent: 'agents', scope: { project } }),
      (e: Error) => e instanceof UserError && /no best_skill\.md here/.test(e.message),
    );
    // An agent target's skill name and description, from the run's config.
    const harnessRun = fakeRun('Rule.\n', {
      env: { name: 'tasks' },
      model: { target: { options: { skill_name: 'support-replies', skill_description: 'Answer support tickets.' } } },
    });
    assert.match(
      fs.readFileSync(deploySkill({ run: harnessRun, agent: 'claude', scope: { project } }).file, 'utf8'),
      /^---\nname: support-replies\ndescription: "Answer support tickets\."/,
    );
  });

  it('the command: shows the diff, says how to undo, and --rollback undoes it; nothing is written outside the project and the home', () => {
    const run = fakeRun('Answer in lower case.\n');
    const project = tmpDir();
    const home = tmpDir();
    const runBefore = snapshot(run);
    const env = { HOME: home };
    const deployed = runCli(['deploy', run, '--to', 'codex'], { cwd: project, env });
    assert.equal(deployed.status, 0, deployed.stderr);
    assert.match(
      deployed.stdout,
      /\+name: skillopt-searchqa[\s\S]*deployed to .*\.agents\/skills\/skillopt-searchqa\/SKILL\.md\nto undo: skillopt deploy --rollback --to codex --project \. --name skillopt-searchqa \(removes it\)/,
    );
    const user = runCli(['deploy', run, '--to', 'claude', '--user', '--description', 'Trivia.'], { cwd: project, env });
    assert.equal(user.status, 0, user.stderr);
    assert.ok(fs.existsSync(path.join(home, '.claude/skills/skillopt-searchqa/SKILL.md')));
    assert.deepEqual(snapshot(run), runBefore);
    const undo = runCli(['deploy', '--rollback', '--to', 'codex', '--project', '.'], { cwd: project, env });
    assert.equal(undo.status, 0, undo.stderr);
    assert.match(undo.stdout, /removed .*SKILL\.md/);
    assert.deepEqual(fs.readdirSync(project), []);
    const bad = runCli(['deploy', run, '--to', 'claude', '--user', '--project', project], { cwd: project, env });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--project and --user name two places/);
    assert.equal(runCli(['deploy', run, '--to', 'gemini'], { cwd: project, env }).status, 2);
  });
});
