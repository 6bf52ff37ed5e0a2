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
import { DEFAULT_SKILL_DESCRIPTION } from '../../src/model/harness/skill-install.ts';
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
    assert.ok(r.notes.some((n) => /the description was made from the run/.test(n)));
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
      /--name: the skill name 'My Skill' holds other characters than lower-case letters/,
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

describe('what an agent chooses a skill by', () => {
  it('a name or a description against the Agent Skills rules is refused with exit 2, and nothing is written', () => {
    const run = fakeRun('Answer in lower case.\n');
    const project = tmpDir();
    const refused: [string[], RegExp][] = [
      [
        ['--description', 'x'.repeat(1025)],
        /--description: the skill description has 1,025 characters, more than the 1,024/,
      ],
      [['--description', 'Use for <b>trivia</b>.'], /--description: the skill description holds '<' or '>'/],
      [['--name', 'ab-'], /--name: the skill name 'ab-' starts or ends with a hyphen/],
      [['--name', 'a--b'], /--name: the skill name 'a--b' has two hyphens in a row/],
      [['--name', 'a'.repeat(65)], /has 65 characters: a skill name is 1 to 64/],
    ];
    for (const [flags, why] of refused) {
      const r = runCli(['deploy', run, '--to', 'copilot', ...flags], { cwd: project, env: { HOME: project } });
      assert.equal(r.status, 2, flags.join(' '));
      assert.match(r.stderr, why);
    }
    assert.deepEqual(fs.readdirSync(project), []);
    const own = fakeRun('---\nname: house-\ndescription: Rules.\n---\n\nRule.\n');
    assert.throws(
      () => deploySkill({ run: own, agent: 'copilot', scope: { project } }),
      (e: Error) =>
        e instanceof UserError && /\(its front matter\): the skill name 'house-' starts or ends/.test(e.message),
    );
    const longest = deploySkill({ run, agent: 'copilot', scope: { project }, description: 'y'.repeat(1024) });
    assert.equal(longest.written, true, 'a description of exactly 1,024 characters is fine');
  });

  it('an agent target refuses the same names and descriptions in its options, naming the file and the key', async () => {
    const { configWith } = await import('../helpers/model-config.ts');
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ skill_name: 'a--b' }, /model\.target\.options\.skill_name: the skill name 'a--b' has two hyphens in a row/],
      [{ skill_name: '-ab' }, /model\.target\.options\.skill_name: the skill name '-ab' starts or ends with a hyphen/],
      [
        { skill_description: 'z'.repeat(1100) },
        /model\.target\.options\.skill_description: the skill description has 1,100 characters/,
      ],
    ];
    for (const [options, why] of cases) {
      const role = { backend: 'copilot_exec', options };
      assert.throws(
        () => configWith({ model: { target: role, optimizer: { backend: 'sim', model: 'sim-1' } } }),
        (e: Error) => e instanceof UserError && /config\.yaml: /.test(e.message) && why.test(e.message),
      );
    }
  });

  it('the default description is made from the skill and the tasks of the run, not a placeholder', () => {
    const skill =
      "# Routing Support Messages\n\nRead the customer's message and name the one team that should handle it. Then stop.\n\n- Refunds go to billing.\n";
    const results = [
      {
        id: 'test-0001',
        hard: 1,
        soft: 1,
        task_type: 'billing',
        task: 'I was charged twice for my order #4411, please refund one of the charges.',
      },
      { id: 'test-0002', hard: 0, soft: 0, task_type: 'shipping', task: 'Where is my parcel?' },
      {
        id: 'test-0003',
        hard: 1,
        soft: 1,
        task_type: 'returns',
        task: 'Can I send back the <small> jacket?\nIt does not fit.',
      },
    ];
    const config = {
      env: { name: 'tasks' },
      model: {
        target: {
          backend: 'codex_exec',
          options: { skill_name: 'support-routing', skill_description: DEFAULT_SKILL_DESCRIPTION },
        },
      },
    };
    const run = fakeRun(skill, config);
    writeFiles(run, { 'test_eval/results.jsonl': `${results.map((r) => JSON.stringify(r)).join('\n')}\n` });
    const project = tmpDir();
    const r = deploySkill({ run, agent: 'codex', scope: { project } });
    const expected =
      'Routing Support Messages: read the customer\'s message and name the one team that should handle it. Use it for tasks like "Where is my parcel?" (billing, returns, shipping).';
    assert.ok(
      fs
        .readFileSync(r.file, 'utf8')
        .startsWith(`---\nname: support-routing\ndescription: ${JSON.stringify(expected)}\n---\n`),
    );
    assert.ok(r.notes.some((n) => n.includes(expected) && /--description/.test(n)));
    // A description the user set for the agent target is theirs.
    const own = fakeRun(skill, {
      ...config,
      model: { target: { options: { skill_description: 'Route support tickets.' } } },
    });
    assert.match(
      fs.readFileSync(deploySkill({ run: own, agent: 'claude', scope: { project } }).file, 'utf8'),
      /description: "Route support tickets\."/,
    );
    // A run with no results yet: the skill alone says what it is.
    const bare = deploySkill({
      run: fakeRun('- Dates as YYYY-MM-DD.\n', { env: { name: 'tasks' } }),
      agent: 'agents',
      scope: { project },
    });
    assert.match(
      fs.readFileSync(bare.file, 'utf8'),
      /^---\nname: skillopt-tasks\ndescription: "Dates as YYYY-MM-DD\."\n---/,
    );
    assert.doesNotMatch(fs.readFileSync(bare.file, 'utf8'), /How to do/);
  });

  it("the skill's own allowed-tools are shown with the diff, and broad ones are warned of", () => {
    const project = tmpDir();
    const deploy = (skill: string) =>
      runCli(['deploy', fakeRun(skill), '--to', 'claude', '--dry-run'], { cwd: project, env: { HOME: project } });
    const rm = deploy(
      '---\nname: cleanup\ndescription: Tidy the build folder.\nallowed-tools: Bash(rm -rf /)\n---\n\nClean up.\n',
    );
    assert.equal(rm.status, 0, rm.stderr);
    assert.match(
      rm.stdout,
      /^allowed-tools \(the skill's own front matter: the agent may use them without asking\): Bash\(rm -rf \/\)\n/,
    );
    assert.match(
      rm.stderr,
      /warning: the skill's front matter lets the agent use, without asking, Bash\(rm -rf \/\) \(a destructive command\)/,
    );
    const listed = deploy(
      '---\nname: reader\ndescription: Read the docs.\nallowed-tools:\n  - Read\n  - Grep\n  - "Bash(git diff:*)"\n---\n\nRead.\n',
    );
    assert.match(listed.stdout, /: Read, Grep, Bash\(git diff:\*\)\n/);
    assert.doesNotMatch(listed.stderr, /warning/);
    const anything = deploy('---\nname: doer\ndescription: Do things.\nallowed-tools: Read, Bash, Write\n---\n\nDo.\n');
    assert.match(anything.stderr, /Bash \(any shell command\), Write \(writing any file\)/);
    assert.deepEqual(fs.readdirSync(project), [], 'a dry run writes nothing');
  });
});
