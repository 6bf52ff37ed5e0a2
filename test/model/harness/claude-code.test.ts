/**
 * The Claude Code harness with the real `claude` CLI (npm @anthropic-ai/claude-code) against a
 * fake Anthropic Messages server on 127.0.0.1 (streaming) that scripts the agent's tool calls.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { CallFailure } from '../../../src/model/failure.ts';
import { ClaudeCodeHarness } from '../../../src/model/harness/claude-code.ts';
import type { HarnessSettings } from '../../../src/model/harness/cli-harness.ts';
import { HarnessChatModel, type HarnessModelOptions } from '../../../src/model/harness/harness-model.ts';
import { FatalModelError, type ChatRequest } from '../../../src/model/types.ts';
import type { PackageFile, PackageFiles } from '../../../src/skill/package/package.ts';
import {
  cliPath,
  harnessSettings,
  missingCli,
  plantAnswers,
  processesRunning,
  until,
} from '../../helpers/agent-cli.ts';
import { fakeAgentServers, type ScriptReply, type Turn } from '../../helpers/fake-agent-server.ts';

const SKILL = 'SKILL-BODY-c41d: give the number only, inside <answer></answer>.';
const REQUEST: ChatRequest = {
  purpose: 'rollout',
  system: `Answer the question.\n\n## Skill\n\n${SKILL}\n\nPut the final answer in <answer></answer> tags.`,
  skill: SKILL,
  messages: [{ role: 'user', content: 'What is 6 times 7?' }],
};
const MODEL: HarnessModelOptions = {
  backend: 'claude_code_exec',
  model: 'claude-sonnet-4-5',
  skillInstall: 'skill',
  skillName: 'skillopt-target',
  skillDescription: 'How to answer arithmetic questions',
  timeoutMs: 60_000,
};

const PACKAGE_FILES: PackageFiles = new Map<string, PackageFile>([
  ['references/units.md', { kind: 'text', text: 'REF-BODY-c41d: weights are given in kg.\n', mode: 0o644 }],
  ['scripts/convert.sh', { kind: 'text', text: '#!/bin/sh\necho SCRIPT-RAN-c41d\n', mode: 0o755 }],
  ['assets/logo.png', { kind: 'binary', bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]), mode: 0o644 }],
]);

const serve = fakeAgentServers();

function settings(url: string, over: Partial<HarnessSettings> = {}): HarnessSettings {
  return harnessSettings({
    path: cliPath('claude'),
    baseUrl: url,
    model: 'claude-sonnet-4-5',
    env: { ANTHROPIC_API_KEY: 'sk-ant-test' },
    ...over,
  });
}

const bash = (command: string): ScriptReply => ({ tool: 'Bash', input: { command, description: 'Run a command' } });

/** The working directory Claude Code tells the model about: the rollout's workspace. */
function cwdOf(turn: Turn): string {
  return /Primary working directory: ([^\\\s]+)/.exec(turn.text)![1]!;
}

describe('claude_code_exec harness (real claude CLI)', { skip: missingCli('claude') }, () => {
  test('a rollout installs the skill where Claude Code reads skills, the agent opens it with the Skill tool, runs a command, and the final message is the reply', async () => {
    const server = await serve((t) => {
      if (t.toolOutputs.length === 0) return { tool: 'Skill', input: { skill: 'skillopt-target' } };
      if (t.toolOutputs.length === 1) return bash('cat task.md');
      return {
        text:
          t.text.includes('SKILL-BODY-c41d') && t.toolOutputs[1]!.includes('6 times 7')
            ? '<answer>42</answer>'
            : '<answer>skill not read</answer>',
      };
    });
    const res = await new HarnessChatModel(new ClaudeCodeHarness(settings(server.url)), MODEL).complete(REQUEST);

    assert.equal(res.text, '<answer>42</answer>');
    const first = server.turns[0]!;
    assert.match(first.text, /- skillopt-target: How to answer arithmetic questions/);
    assert.doesNotMatch(first.text, /SKILL-BODY-c41d/);
    assert.match(first.text, /\.claude\/skills\/skillopt-target\/SKILL\.md/);
    assert.match(server.turns[1]!.text, /SKILL-BODY-c41d/);
    assert.deepEqual(
      res.trace!.steps.map((s) => [s.tool, s.input, s.ok]),
      [
        ['Skill', 'skillopt-target', true],
        ['Bash', 'cat task.md', true],
      ],
    );
    assert.deepEqual(res.trace!.files, ['task.md']);
    assert.ok(res.trace!.turns! >= server.turns.length, 'the turns Claude Code counts (the Skill launch is one)');
    // Messages API usage: cache reads are reported apart from input tokens and added back.
    assert.deepEqual(res.usage, { input: 360, output: 24, cached: 60, reasoning: 0 });
    assert.ok(typeof res.costUsd === 'number' && res.costUsd > 0, 'the cost Claude Code reports');
    assert.equal(fs.existsSync(cwdOf(first)), false, 'the workspace is removed after the run');
  });

  test('a package is installed whole: the agent reads its reference and runs its script, and the trace shows both', async () => {
    const server = await serve((t) => {
      const root = `${cwdOf(server.turns[0]!)}/.claude/skills/skillopt-target`;
      if (t.toolOutputs.length === 0) return { tool: 'Skill', input: { skill: 'skillopt-target' } };
      if (t.toolOutputs.length === 1) return { tool: 'Read', input: { file_path: `${root}/references/units.md` } };
      if (t.toolOutputs.length === 2)
        return bash('ls -l .claude/skills/skillopt-target/scripts .claude/skills/skillopt-target/assets');
      return { text: `<answer>${t.toolOutputs.slice(1).join(' | ')}</answer>` };
    });
    const res = await new HarnessChatModel(new ClaudeCodeHarness(settings(server.url)), MODEL).complete({
      ...REQUEST,
      skillFiles: PACKAGE_FILES,
    });
    assert.match(res.text, /REF-BODY-c41d/);
    // Installed with their modes (Claude Code runs read-only commands only here: no script is run).
    assert.match(res.text, /-rwxr-xr-x[^\n]*convert\.sh/);
    assert.match(res.text, /logo\.png/);
    assert.deepEqual(
      res.trace!.steps.map((s) => [s.tool, s.ok]),
      [
        ['Skill', true],
        ['Read', true],
        ['Bash', true],
      ],
    );
    assert.match(res.trace!.steps[1]!.input, /\.claude\/skills\/skillopt-target\/references\/units\.md$/);
    assert.ok(
      res.trace!.files.some((f) => f.endsWith('references/units.md')),
      res.trace!.files.join(' '),
    );
    // By package path: the Skill tool opened SKILL.md, Read the reference; listing folders reads no file.
    assert.deepEqual(res.trace!.package, { read: ['SKILL.md', 'references/units.md'], ran: [] });
  });

  test('with skill_install: instructions the skill goes in CLAUDE.md, sent in full with the first request', async () => {
    const server = await serve(() => ({ text: '<answer>42</answer>' }));
    await new HarnessChatModel(new ClaudeCodeHarness(settings(server.url)), {
      ...MODEL,
      skillInstall: 'instructions',
    }).complete(REQUEST);
    assert.match(server.turns[0]!.text, /CLAUDE\.md \(project instructions[^)]*\):\\n\\nSKILL-BODY-c41d/);
  });

  test("the agent's reads and commands outside its workspace are refused", async () => {
    const answers = plantAnswers();
    const probes: ScriptReply[] = [
      { tool: 'Read', input: { file_path: answers.file } },
      bash(`cat ${answers.file}`),
      bash(`python3 -c "print(open('${answers.file}').read())"`),
      bash(`grep -r GOLD ${answers.dir}`),
    ];
    const server = await serve((t) => probes[t.toolOutputs.length] ?? { text: '<answer>none</answer>' });
    const res = await new HarnessChatModel(new ClaudeCodeHarness(settings(server.url)), MODEL).complete(REQUEST);
    assert.ok(fs.readFileSync(answers.file, 'utf8').includes(answers.secret));
    for (const t of server.turns) assert.doesNotMatch(t.text, new RegExp(answers.secret));
    assert.deepEqual(
      res.trace!.steps.map((s) => s.ok),
      [false, false, false, false],
    );
    assert.match(res.trace!.steps[0]!.output!, /permission/);
    assert.ok(res.trace!.errors.some((e) => e.startsWith('permission denied: Bash')));
    fs.rmSync(answers.dir, { recursive: true });
  });

  test("the user's login carries over to the per-run home, and nothing else of theirs does", async () => {
    const server = await serve(() => ({ text: '<answer>42</answer>' }));
    const s = settings(server.url, { env: {} });
    const userHome = path.join(s.environment.HOME!, '.claude');
    fs.mkdirSync(path.join(userHome, 'skills', 'their-skill'), { recursive: true });
    fs.writeFileSync(
      path.join(userHome, '.credentials.json'),
      JSON.stringify({
        claudeAiOauth: {
          accessToken: 'sk-ant-oat01-their-login',
          refreshToken: 'sk-ant-ort01-x',
          expiresAt: Date.now() + 3_600_000,
          scopes: ['user:inference'],
          subscriptionType: 'pro',
        },
      }),
    );
    fs.writeFileSync(path.join(userHome, 'CLAUDE.md'), 'THEIR-OWN-INSTRUCTIONS');
    fs.writeFileSync(
      path.join(userHome, 'skills', 'their-skill', 'SKILL.md'),
      '---\nname: their-skill\ndescription: THEIR-OWN-SKILL\n---\nx',
    );
    await new HarnessChatModel(new ClaudeCodeHarness(s), MODEL).complete(REQUEST);
    assert.equal(server.turns[0]!.request.headers.authorization, 'Bearer sk-ant-oat01-their-login');
    assert.doesNotMatch(server.turns[0]!.text, /THEIR-OWN-INSTRUCTIONS|THEIR-OWN-SKILL/);
  });

  test('a refused login stops at the first 401 instead of ten retries, and says how to log in', async () => {
    const server = await serve(() => ({ status: 401, message: 'invalid x-api-key' }));
    const model = new HarnessChatModel(new ClaudeCodeHarness(settings(server.url)), MODEL);
    await assert.rejects(
      model.complete(REQUEST),
      (err: Error) =>
        err instanceof FatalModelError && /Claude Code CLI is not logged in.*claude auth login/.test(err.message),
    );
    assert.equal(server.turns.length, 1);
  });

  test('no login at all is a fatal error that says how to log in', async () => {
    const server = await serve(() => ({ text: 'unreachable' }));
    const model = new HarnessChatModel(new ClaudeCodeHarness(settings(server.url, { env: {} })), MODEL);
    await assert.rejects(
      model.complete(REQUEST),
      (err: Error) =>
        err instanceof FatalModelError && /Not logged in/.test(err.message) && /claude auth login/.test(err.message),
    );
    assert.equal(server.turns.length, 0);
  });

  test('a rate limit the CLI gives up on is a retryable rate_limit failure', async () => {
    const server = await serve(() => ({
      status: 429,
      message: 'Number of request tokens has exceeded your per-minute rate limit',
    }));
    const model = new HarnessChatModel(
      new ClaudeCodeHarness(
        settings(server.url, { env: { ANTHROPIC_API_KEY: 'sk-ant-test', CLAUDE_CODE_MAX_RETRIES: '0' } }),
      ),
      MODEL,
    );
    await assert.rejects(
      model.complete(REQUEST),
      (err: Error) => err instanceof CallFailure && err.kind === 'rate_limit' && err.status === 429,
    );
  });

  test('stopping a run (what the per-call timeout does) ends the agent and the command it started in a session of its own', async () => {
    const marker = `sleep 43.${process.pid}`;
    const server = await serve((t) => (t.toolOutputs.length === 0 ? bash(marker) : { text: 'done' }));
    const model = new HarnessChatModel(new ClaudeCodeHarness(settings(server.url)), MODEL);
    const stop = new AbortController();
    const run = model.complete({ ...REQUEST, signal: stop.signal });
    await until(() => processesRunning(marker) > 0, 30_000, 'the agent to start its command');
    stop.abort();
    await assert.rejects(run, (err: Error) => err instanceof CallFailure && err.kind === 'timeout');
    assert.equal(processesRunning(marker), 0);
  });
});
