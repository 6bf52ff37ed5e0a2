/**
 * The pieces every harness is built from: the process runner, finding and checking the binary,
 * the child's environment, the configuration home, the skill files, the prompt, the workspace.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { checkCliVersion, resolveCli, type CliIdentity } from '../../../src/model/harness/binary.ts';
import { childEnvironment } from '../../../src/model/harness/environment.ts';
import { reportedFailure } from '../../../src/model/harness/failures.ts';
import { cliHome } from '../../../src/model/harness/home.ts';
import { runProcess } from '../../../src/model/harness/process.ts';
import { agentPrompt, instructionsWithout } from '../../../src/model/harness/prompt.ts';
import { installSkill, skillMarkdown } from '../../../src/model/harness/skill-install.ts';
import { filesNamed, traceText } from '../../../src/model/harness/trace.ts';
import { createWorkspace } from '../../../src/model/harness/workspace.ts';
import { CODEX_CLI } from '../../../src/model/harness/codex.ts';
import { CallFailure } from '../../../src/model/failure.ts';
import { FatalModelError } from '../../../src/model/types.ts';
import { processesRunning, tempDir, until } from '../../helpers/agent-cli.ts';

const CLI: CliIdentity = {
  title: 'Demo CLI',
  command: 'democli',
  install: 'Install it with `npm i -g democli`',
  optionKey: 'the role option `path`',
  minVersion: '1.4.0',
  testedVersion: '1.4.2',
};

function script(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`);
  fs.chmodSync(file, 0o755);
  return file;
}

describe('process runner', () => {
  test('the prompt goes in on stdin and stdout comes back line by line', async () => {
    const r = await runProcess({
      command: 'sh',
      args: ['-c', 'cat; echo; echo second'],
      cwd: '/',
      env: { PATH: process.env.PATH! },
      stdin: 'first',
    });
    assert.deepEqual(r.lines, ['first', 'second']);
    assert.equal(r.exitCode, 0);
  });

  test('a timeout kills the whole group, background commands included', async () => {
    const marker = `sleep 53.${process.pid}`;
    const run = runProcess({
      command: 'sh',
      args: ['-c', `${marker} & sleep 54.${process.pid}`],
      cwd: '/',
      env: { PATH: process.env.PATH! },
      timeoutMs: 1500,
    });
    await until(() => processesRunning(marker) > 0, 5000, 'the background command');
    const r = await run;
    assert.equal(r.timedOut, true);
    assert.equal(processesRunning(marker), 0);
    assert.equal(processesRunning(`sleep 54.${process.pid}`), 0);
  });

  test('a command started in a session of its own is killed too, by the run marker in its environment', async () => {
    const marker = `sleep 55.${process.pid}`;
    const r = await runProcess({
      command: 'sh',
      args: [
        '-c',
        `setsid ${marker} > /dev/null 2>&1 < /dev/null & while ! pgrep -xf "${marker}" > /dev/null; do sleep 0.05; done; echo started`,
      ],
      cwd: '/',
      env: { PATH: process.env.PATH! },
    });
    assert.deepEqual(r.lines, ['started']);
    assert.equal(processesRunning(marker), 0);
  });

  test('the reader can stop the run when it has seen enough', async () => {
    const r = await runProcess({
      command: 'sh',
      args: ['-c', 'echo one; echo fatal; sleep 30; echo never'],
      cwd: '/',
      env: { PATH: process.env.PATH! },
      onLine: (l) => (l === 'fatal' ? 'stop' : undefined),
    });
    assert.equal(r.stopped, true);
    assert.deepEqual(r.lines, ['one', 'fatal']);
  });

  test('an abort signal ends the run', async () => {
    const ac = new AbortController();
    const run = runProcess({
      command: 'sh',
      args: ['-c', 'echo up; sleep 30'],
      cwd: '/',
      env: { PATH: process.env.PATH! },
      signal: ac.signal,
      onLine: () => ac.abort(),
    });
    const r = await run;
    assert.equal(r.aborted, true);
  });

  test('a binary that cannot be started is reported, not thrown', async () => {
    const r = await runProcess({ command: '/nonexistent/agent', args: [], cwd: '/', env: {} });
    assert.equal(r.spawnError?.code, 'ENOENT');
  });
});

describe('finding the CLI and checking its version', () => {
  test('a missing binary says how to install it or where to set the path', () => {
    assert.throws(
      () => resolveCli(CLI, '', '/nonexistent'),
      (err: Error) =>
        err instanceof FatalModelError &&
        /Demo CLI \('democli'\) was not found on PATH\. Install it with `npm i -g democli`, or set the role option `path`/.test(
          err.message,
        ),
    );
    assert.throws(
      () => resolveCli(CLI, '/opt/nothing/democli', '/usr/bin'),
      (err: Error) => err instanceof FatalModelError && /'\/opt\/nothing\/democli' does not exist/.test(err.message),
    );
  });

  test('found on PATH, or at the configured path', () => {
    const dir = tempDir('skillopt-test-bin');
    const bin = script(dir, 'democli', 'echo 1.4.2');
    assert.equal(resolveCli(CLI, '', `/nonexistent:${dir}`), bin);
    assert.equal(resolveCli(CLI, bin, ''), bin);
  });

  test('a version older than the oldest supported is refused; a newer one runs with a note', async () => {
    const dir = tempDir('skillopt-test-bin');
    await assert.rejects(
      checkCliVersion(CLI, script(dir, 'old', 'echo "democli 1.3.9"'), {}),
      (err: Error) =>
        err instanceof FatalModelError &&
        /version 1\.3\.9; versions 1\.4\.0 and later are supported \(tested: 1\.4\.2\)/.test(err.message),
    );
    const newer = await checkCliVersion(CLI, script(dir, 'new', 'echo "democli 1.5.0 (build 7)"'), {});
    assert.equal(newer.version, '1.5.0');
    assert.match(newer.note!, /newer than the newest tested with skillopt \(1\.4\.2\)/);
    const tested = await checkCliVersion(CLI, script(dir, 'tested', 'echo 1.4.2'), {});
    assert.equal(tested.note, undefined);
  });
});

describe('the environment of an agent', () => {
  test("skillopt's keys stay out; what any program needs, what the CLI needs and what the user names go in", () => {
    const parent = {
      PATH: '/bin',
      HOME: '/home/u',
      LC_ALL: 'C',
      OPENAI_API_KEY: 'sk-1',
      ANTHROPIC_API_KEY: 'sk-2',
      AWS_SECRET_ACCESS_KEY: 'x',
      CODEX_API_KEY: 'c',
      MY_PROXY_TOKEN: 't',
      HTTPS_PROXY: 'http://proxy:3128',
    };
    const env = childEnvironment(parent, {
      cliNames: ['CODEX_API_KEY'],
      passNames: ['MY_PROXY_TOKEN'],
      set: { CODEX_HOME: '/tmp/h' },
    });
    assert.deepEqual(env, {
      PATH: '/bin',
      HOME: '/home/u',
      HTTPS_PROXY: 'http://proxy:3128',
      LC_ALL: 'C',
      CODEX_API_KEY: 'c',
      MY_PROXY_TOKEN: 't',
      CODEX_HOME: '/tmp/h',
    });
  });
});

describe('the configuration home', () => {
  test("an isolated home links the user's login file and nothing else of theirs", () => {
    const user = tempDir('skillopt-test-userhome');
    fs.writeFileSync(path.join(user, 'auth.json'), '{"tokens":{}}');
    fs.writeFileSync(path.join(user, 'config.toml'), 'model = "theirs"');
    fs.mkdirSync(path.join(user, 'skills'));
    const home = cliHome('', { agent: 'codex', userHome: user, link: ['auth.json'] });
    assert.equal(home.isolated, true);
    assert.deepEqual(fs.readdirSync(home.dir), ['auth.json']);
    assert.equal(fs.readlinkSync(path.join(home.dir, 'auth.json')), path.join(user, 'auth.json'));
    assert.equal(cliHome('user', { agent: 'codex', userHome: user, link: [] }).dir, user);
    assert.equal(cliHome('/srv/codex-home', { agent: 'codex', userHome: user, link: [] }).dir, '/srv/codex-home');
  });
});

describe('the skill in the workspace', () => {
  test('front matter is added when the skill has none, and kept when it has', () => {
    assert.equal(
      skillMarkdown('Do X.', 'skillopt-target', 'How to do X'),
      '---\nname: skillopt-target\ndescription: "How to do X"\n---\n\nDo X.\n',
    );
    const own = '---\nname: mine\ndescription: mine\n---\nBody';
    assert.equal(skillMarkdown(own, 'skillopt-target', 'ignored'), `${own}\n`);
  });

  test('skill, instructions and both put the files where the agent reads them and say so in the prompt', () => {
    const layout = { skillsDir: '.claude/skills', instructionsFile: 'CLAUDE.md' };
    const skill = installSkill('Do X.', layout, 'skill', 's', 'd');
    assert.deepEqual(
      skill.files.map((f) => f.path),
      ['.claude/skills/s/SKILL.md'],
    );
    assert.match(skill.promptText, /`\.claude\/skills\/s\/SKILL\.md`.*read all of it/);
    const instr = installSkill('Do X.', layout, 'instructions', 's', 'd');
    assert.deepEqual(instr.files, [{ path: 'CLAUDE.md', content: 'Do X.\n' }]);
    assert.match(instr.promptText, /CLAUDE\.md/);
    assert.deepEqual(
      installSkill('Do X.', layout, 'both', 's', 'd').files.map((f) => f.path),
      ['.claude/skills/s/SKILL.md', 'CLAUDE.md'],
    );
    assert.deepEqual(installSkill('  ', layout, 'both', 's', 'd'), { files: [], promptText: '' });
  });
});

describe('the prompt of an agent run', () => {
  test("the skill's text in the system prompt is replaced by where to find it", () => {
    assert.equal(
      instructionsWithout(
        'Intro.\n\n## Skill\n\nRULE ONE\nRULE TWO\n\nAnswer in tags.',
        'RULE ONE\nRULE TWO',
        'See SKILL.md.',
      ),
      'Intro.\n\n## Skill\n\nSee SKILL.md.\n\nAnswer in tags.',
    );
    assert.equal(instructionsWithout('Answer.', 'not in it', 'See SKILL.md.'), 'See SKILL.md.\n\nAnswer.');
  });

  test('images become files under attachments/ named in the prompt; a longer conversation is written out turn by turn', () => {
    const png = `data:image/png;base64,${Buffer.from('PNGDATA').toString('base64')}`;
    const p = agentPrompt(
      {
        purpose: 'rollout',
        system: 'Look at the page.',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is the total?' },
              { type: 'image', image: png },
            ],
          },
          { role: 'assistant', content: 'About 40.' },
          { role: 'user', content: 'Give it in <answer> tags.' },
        ],
      },
      '',
      ['docs/bulletin.txt'],
    );
    assert.deepEqual(
      p.attachments.map((a) => [a.path, Buffer.from(a.bytes).toString()]),
      [['attachments/image_01.png', 'PNGDATA']],
    );
    assert.match(
      p.prompt,
      /\[user\]\nWhat is the total\?\n\[image: attachments\/image_01\.png\]\n\n\[you\]\nAbout 40\.\n\n\[user\]\nGive it in <answer> tags\./,
    );
    assert.match(p.prompt, /- attachments\/image_01\.png\n- docs\/bulletin\.txt/);
    assert.match(p.taskFile, /^Look at the page\./);
  });

  test('a request that brings its own tools is refused: the agent uses its own', () => {
    assert.throws(
      () =>
        agentPrompt(
          {
            purpose: 'rollout',
            messages: [{ role: 'user', content: 'x' }],
            tools: [{ name: 'grep', description: '', parameters: {} }],
          },
          '',
          [],
        ),
      FatalModelError,
    );
  });
});

describe('the workspace', () => {
  test('files are written and copied inside it, paths that leave it are refused, and it is removed', () => {
    const src = tempDir('skillopt-test-docs');
    fs.writeFileSync(path.join(src, 'a.txt'), 'A');
    const ws = createWorkspace(
      'test',
      [{ path: 'task.md', content: 'T' }],
      [
        { path: 'docs', source: src },
        { path: 'notes/n.txt', content: 'N' },
      ],
    );
    assert.equal(fs.readFileSync(path.join(ws.dir, 'docs', 'a.txt'), 'utf8'), 'A');
    assert.equal(fs.readFileSync(path.join(ws.dir, 'notes', 'n.txt'), 'utf8'), 'N');
    assert.deepEqual(filesNamed(['cat task.md docs/a.txt', `${ws.dir}/notes/n.txt`, 'ls /etc'], ws.dir), [
      'task.md',
      'docs/a.txt',
      'notes/n.txt',
    ]);
    ws.remove();
    assert.equal(fs.existsSync(ws.dir), false);
    assert.throws(
      () => createWorkspace('test', [{ path: '../escape.txt', content: 'x' }]),
      /must be a relative path inside the workspace/,
    );
    assert.throws(() => createWorkspace('test', [], [{ path: 'x', source: '/nonexistent/src' }]), /does not exist/);
  });
});

describe('failures the CLIs report', () => {
  test('classified by status, else by their words', () => {
    const kind = (m: string, s?: number) => {
      const f = reportedFailure({ ...CODEX_CLI }, m, s);
      return f instanceof CallFailure ? f.kind : 'fatal';
    };
    assert.equal(kind('whatever', 401), 'fatal');
    assert.equal(kind('Not logged in · Please run /login'), 'fatal');
    assert.equal(kind("You've hit your usage limit. Try again at 3:05 PM."), 'rate_limit');
    assert.equal(kind('stream error', 429), 'rate_limit');
    assert.equal(kind('Overloaded'), 'server');
    assert.equal(kind('prompt is too long: 250000 tokens > 200000 maximum'), 'rejected');
    assert.equal(kind('connect ECONNREFUSED 127.0.0.1:9'), 'network');
  });
});

describe('the trace', () => {
  test('as text for the optimizer: the tools, the files, what went wrong', () => {
    const text = traceText({
      agent: 'codex',
      steps: [
        { tool: 'shell', input: 'cat task.md', ok: true },
        { tool: 'shell', input: 'cat /x', ok: false, output: 'No such file' },
      ],
      files: ['task.md'],
      errors: ['request failed (429)'],
      durationMs: 5,
      exitCode: 0,
    });
    assert.equal(
      text,
      '1. shell cat task.md\n2. shell cat /x [failed]: No such file\nfiles: task.md\nerror: request failed (429)',
    );
  });
});
