/**
 * The Codex harness with the real `codex` CLI (npm @openai/codex) against a fake Responses API
 * server on 127.0.0.1 that scripts the agent's tool calls.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { CallFailure } from '../../../src/model/failure.ts';
import { CodexHarness } from '../../../src/model/harness/codex.ts';
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

/** A 1×1 PNG. */
const ONE_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg==';
const SKILL = 'SKILL-BODY-7f3a: give the number only, inside <answer></answer>.';
const REQUEST: ChatRequest = {
  purpose: 'rollout',
  system: `Answer the question.\n\n## Skill\n\n${SKILL}\n\nPut the final answer in <answer></answer> tags.`,
  skill: SKILL,
  messages: [{ role: 'user', content: 'What is 6 times 7?' }],
};
const MODEL: HarnessModelOptions = {
  backend: 'codex_exec',
  model: 'gpt-5.5',
  skillInstall: 'skill',
  skillName: 'skillopt-target',
  skillDescription: 'How to answer arithmetic questions',
  timeoutMs: 60_000,
};

const PACKAGE_FILES: PackageFiles = new Map<string, PackageFile>([
  ['references/units.md', { kind: 'text', text: 'REF-BODY-7f3a: weights are given in kg.\n', mode: 0o644 }],
  ['scripts/convert.sh', { kind: 'text', text: '#!/bin/sh\necho SCRIPT-RAN-7f3a\n', mode: 0o755 }],
  ['assets/logo.png', { kind: 'binary', bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]), mode: 0o644 }],
]);

const serve = fakeAgentServers();

const shell = (cmd: string): ScriptReply => ({ tool: 'exec_command', input: { cmd } });

/** The `<cwd>` Codex reports to the model: the rollout's workspace. */
function cwdOf(turn: Turn): string {
  return /<cwd>([^<]+)<\/cwd>/.exec(turn.text)![1]!;
}

describe('codex_exec harness (real codex CLI)', { skip: missingCli('codex') }, () => {
  test('a package is installed whole: the agent reads its reference and runs its script, and the trace shows both', async () => {
    const server = await serve((t) => {
      if (t.toolOutputs.length === 0) return shell('cat .agents/skills/skillopt-target/references/units.md');
      if (t.toolOutputs.length === 1) return shell('./.agents/skills/skillopt-target/scripts/convert.sh');
      return { text: `<answer>${t.toolOutputs.join(' | ')}</answer>` };
    });
    const model = new HarnessChatModel(
      new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` })),
      MODEL,
    );
    const res = await model.complete({ ...REQUEST, skillFiles: PACKAGE_FILES });
    assert.match(res.text, /REF-BODY-7f3a/);
    assert.match(res.text, /SCRIPT-RAN-7f3a/, 'the script kept its mode and ran');
    assert.deepEqual(
      res.trace!.steps.map((s) => [s.tool, s.input, s.ok]),
      [
        ['shell', 'cat .agents/skills/skillopt-target/references/units.md', true],
        ['shell', './.agents/skills/skillopt-target/scripts/convert.sh', true],
      ],
    );
    assert.deepEqual(res.trace!.package, { read: ['references/units.md'], ran: ['scripts/convert.sh'] });
  });

  test('a rollout installs the skill where Codex reads skills, runs a command, and returns the final message with usage and trace', async () => {
    const server = await serve((t) => {
      if (t.toolOutputs.length === 0) return shell('cat .agents/skills/skillopt-target/SKILL.md');
      if (t.toolOutputs.length === 1) return shell('cat task.md');
      return {
        text:
          t.toolOutputs[0]!.includes('SKILL-BODY-7f3a') && t.toolOutputs[1]!.includes('6 times 7')
            ? '<answer>42</answer>'
            : '<answer>skill not read</answer>',
      };
    });
    const model = new HarnessChatModel(
      new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` })),
      MODEL,
    );
    const res = await model.complete(REQUEST);

    assert.equal(res.text, '<answer>42</answer>');
    const first = server.turns[0]!;
    // Codex lists the skill by name, description and path; the body reaches the model only once read.
    assert.match(first.text, /skillopt-target: How to answer arithmetic questions/);
    assert.match(first.text, /\.agents\/skills/);
    assert.doesNotMatch(first.text, /SKILL-BODY-7f3a/);
    assert.match(first.text, /Open it and read all of it before you do anything else/);
    assert.match(server.turns[1]!.text, /SKILL-BODY-7f3a/);
    assert.equal(server.turns.length, 3);
    assert.deepEqual(
      res.trace!.steps.map((s) => [s.tool, s.input, s.ok]),
      [
        ['shell', 'cat .agents/skills/skillopt-target/SKILL.md', true],
        ['shell', 'cat task.md', true],
      ],
    );
    assert.deepEqual(res.trace!.files, ['.agents/skills/skillopt-target/SKILL.md', 'task.md']);
    assert.ok(res.trace!.sessionId);
    // Usage summed over the three requests, cached tokens included in the input.
    assert.deepEqual(res.usage, { input: 360, output: 24, cached: 60, reasoning: 0 });
    assert.equal(fs.existsSync(cwdOf(first)), false, 'the workspace is removed after the run');
  });

  test('with skill_install: instructions the skill goes in AGENTS.md, sent in full with the first request', async () => {
    const server = await serve(() => ({ text: '<answer>42</answer>' }));
    const model = new HarnessChatModel(
      new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` })),
      { ...MODEL, skillInstall: 'instructions' },
    );
    await model.complete(REQUEST);
    assert.match(server.turns[0]!.text, /AGENTS\.md instructions for [^\\]+\\n\\n<INSTRUCTIONS>\\nSKILL-BODY-7f3a/);
    assert.doesNotMatch(server.turns[0]!.text, /skillopt-target: How to answer/);
  });

  test('an image of the request becomes a file in the workspace and is attached to the prompt', async () => {
    const server = await serve(() => ({ text: '<answer>42</answer>' }));
    const image = `data:image/png;base64,${ONE_PIXEL_PNG}`;
    const model = new HarnessChatModel(
      new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` })),
      MODEL,
    );
    await model.complete({
      ...REQUEST,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What does the page say?' },
            { type: 'image', image },
          ],
        },
      ],
    });
    const input = server.turns[0]!.request.body.input as { content?: { type: string; image_url?: string }[] }[];
    const images = input.flatMap((i) => i.content ?? []).filter((p) => p.type === 'input_image');
    assert.equal(images.length, 1);
    assert.match(images[0]!.image_url!, /^data:image\/png;base64,/);
    assert.match(server.turns[0]!.text, /\[image: attachments\/image_01\.png\]/);
  });

  test('the sandbox keeps the agent out of files outside its workspace', async () => {
    const answers = plantAnswers();
    const server = await serve((t) =>
      t.toolOutputs.length === 0
        ? shell(`cat ${answers.file}; ls ${answers.dir}`)
        : { text: `<answer>${t.toolOutputs[0]}</answer>` },
    );
    const model = new HarnessChatModel(
      new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` })),
      MODEL,
    );
    const res = await model.complete(REQUEST);
    assert.ok(fs.readFileSync(answers.file, 'utf8').includes(answers.secret), 'the answers file is there to be read');
    assert.match(server.turns[1]!.toolOutputs[0]!, /No such file or directory/);
    for (const t of server.turns) assert.doesNotMatch(t.text, new RegExp(answers.secret));
    assert.equal(res.trace!.steps[0]!.ok, false);
    fs.rmSync(answers.dir, { recursive: true });
  });

  test("the user's login carries over to the per-run home, and nothing else of theirs does", async () => {
    const server = await serve(() => ({ text: '<answer>42</answer>' }));
    const settings = harnessSettings({ path: cliPath('codex'), baseUrl: '' });
    const userHome = path.join(settings.environment.HOME!, '.codex');
    fs.mkdirSync(path.join(userHome, 'skills', 'their-skill'), { recursive: true });
    fs.writeFileSync(
      path.join(userHome, 'auth.json'),
      JSON.stringify({ OPENAI_API_KEY: 'sk-their-login', tokens: null, last_refresh: null }),
    );
    fs.writeFileSync(path.join(userHome, 'AGENTS.md'), 'THEIR-OWN-INSTRUCTIONS');
    fs.writeFileSync(
      path.join(userHome, 'skills', 'their-skill', 'SKILL.md'),
      '---\nname: their-skill\ndescription: THEIR-OWN-SKILL\n---\nx',
    );
    const provider = {
      model_provider: 'login',
      'model_providers.login.name': 'login',
      'model_providers.login.base_url': `${server.url}/v1`,
      'model_providers.login.wire_api': 'responses',
      'model_providers.login.requires_openai_auth': true,
    };
    await new HarnessChatModel(new CodexHarness(settings, provider), MODEL).complete(REQUEST);
    assert.equal(server.turns[0]!.request.headers.authorization, 'Bearer sk-their-login');
    assert.doesNotMatch(server.turns[0]!.text, /THEIR-OWN-INSTRUCTIONS|THEIR-OWN-SKILL/);
  });

  test('a refused login stops at the first 401, says how to log in, and is not retried', async () => {
    const server = await serve(() => ({ status: 401, message: 'Incorrect API key provided' }));
    const model = new HarnessChatModel(
      new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` })),
      MODEL,
    );
    await assert.rejects(
      model.complete(REQUEST),
      (err: Error) => err instanceof FatalModelError && /Codex CLI is not logged in.*codex login/.test(err.message),
    );
    // Codex would retry five times; the harness stops it after the first refusal.
    assert.equal(server.turns.length, 1);
  });

  test("pointed at an endpoint with the role's key, a 401 names the endpoint and the key's variable, not `codex login`", async () => {
    const server = await serve(() => ({ status: 401, message: 'Incorrect API key provided' }));
    const settings = harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1`, apiKeyEnv: 'GATEWAY_KEY' });
    settings.environment.GATEWAY_KEY = 'gw-key-0123456789';
    await assert.rejects(
      new HarnessChatModel(new CodexHarness(settings), MODEL).complete(REQUEST),
      (err: Error) =>
        err instanceof FatalModelError &&
        err.message.startsWith(`the Codex CLI's endpoint ${server.url}/v1 refused the key in GATEWAY_KEY (`) &&
        /check that variable \(the role's api_key_env\)/.test(err.message) &&
        !/codex login/.test(err.message),
    );
    assert.equal(server.turns[0]!.request.headers.authorization, 'Bearer gw-key-0123456789');
  });

  test('a rate limit the CLI gives up on is a retryable rate_limit failure, not a score', async () => {
    const server = await serve(() => ({ status: 429, message: 'Rate limit reached for requests' }));
    const harness = new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` }), {
      'model_providers.skillopt.request_max_retries': 0,
      'model_providers.skillopt.stream_max_retries': 0,
    });
    const model = new HarnessChatModel(harness, MODEL);
    await assert.rejects(
      model.complete(REQUEST),
      (err: Error) => err instanceof CallFailure && err.kind === 'rate_limit' && err.retryable,
    );
  });

  test('stopping a run (what the per-call timeout does) ends the agent and the command it started', async () => {
    const marker = `sleep 41.${process.pid}`;
    const server = await serve((t) => (t.toolOutputs.length === 0 ? shell(marker) : { text: 'done' }));
    const model = new HarnessChatModel(
      new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` })),
      MODEL,
    );
    const stop = new AbortController();
    const run = model.complete({ ...REQUEST, signal: stop.signal });
    await until(() => processesRunning(marker) > 0, 30_000, 'the agent to start its command');
    stop.abort();
    await assert.rejects(run, (err: Error) => err instanceof CallFailure && err.kind === 'timeout');
    assert.equal(processesRunning(marker), 0);
  });
});
