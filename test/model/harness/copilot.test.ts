/**
 * The Copilot harness with the real `copilot` CLI (npm @github/copilot) in its custom-provider
 * mode (COPILOT_PROVIDER_BASE_URL, offline), against a fake Responses API server on 127.0.0.1
 * that scripts the agent's tool calls.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { CallFailure } from '../../../src/model/failure.ts';
import { CopilotHarness } from '../../../src/model/harness/copilot.ts';
import { HarnessChatModel, type HarnessModelOptions } from '../../../src/model/harness/harness-model.ts';
import { FatalModelError, type ChatRequest } from '../../../src/model/types.ts';
import { cliPath, harnessSettings, missingCli, plantAnswers } from '../../helpers/agent-cli.ts';
import { fakeAgentServers, type ScriptReply } from '../../helpers/fake-agent-server.ts';

const SKILL = 'SKILL-BODY-9b2e: give the number only, inside <answer></answer>.';
const REQUEST: ChatRequest = {
  purpose: 'rollout',
  system: `Answer the question.\n\n## Skill\n\n${SKILL}\n\nPut the final answer in <answer></answer> tags.`,
  skill: SKILL,
  messages: [{ role: 'user', content: 'What is 6 times 7?' }],
};
const MODEL: HarnessModelOptions = {
  backend: 'copilot_exec',
  model: 'gpt-5.5',
  skillInstall: 'skill',
  skillName: 'skillopt-target',
  skillDescription: 'How to answer arithmetic questions',
  timeoutMs: 60_000,
};

const serve = fakeAgentServers();

const bash = (command: string): ScriptReply => ({ tool: 'bash', input: { command, description: 'Run a command' } });
const model = (url: string, o: Partial<HarnessModelOptions> = {}) =>
  new HarnessChatModel(new CopilotHarness(harnessSettings({ path: cliPath('copilot'), baseUrl: `${url}/v1` })), {
    ...MODEL,
    ...o,
  });

describe('copilot_exec harness (real copilot CLI)', { skip: missingCli('copilot') }, () => {
  test('a rollout installs the skill where Copilot reads skills, runs a command, and returns the final message with usage and trace', async () => {
    const server = await serve((t) => {
      if (t.toolOutputs.length === 0) return bash('cat .github/skills/skillopt-target/SKILL.md');
      if (t.toolOutputs.length === 1) return bash('cat task.md');
      return {
        text:
          t.toolOutputs[0]!.includes('SKILL-BODY-9b2e') && t.toolOutputs[1]!.includes('6 times 7')
            ? '<answer>42</answer>'
            : '<answer>skill not read</answer>',
      };
    });
    const res = await model(server.url).complete(REQUEST);

    assert.equal(res.text, '<answer>42</answer>');
    const first = server.turns[0]!;
    assert.match(
      first.text,
      /<name>skillopt-target<\/name>\\n\s*<description>How to answer arithmetic questions<\/description>/,
    );
    assert.doesNotMatch(first.text, /SKILL-BODY-9b2e/);
    assert.match(server.turns[1]!.text, /SKILL-BODY-9b2e/);
    assert.deepEqual(
      res.trace!.steps.map((s) => [s.tool, s.input, s.ok]),
      [
        ['bash', 'cat .github/skills/skillopt-target/SKILL.md', true],
        ['bash', 'cat task.md', true],
      ],
    );
    assert.deepEqual(res.trace!.files, ['.github/skills/skillopt-target/SKILL.md', 'task.md']);
    // Token counts come from Copilot's usage report, not from the event stream.
    assert.deepEqual(res.usage, { input: 360, output: 24, cached: 60, reasoning: 0 });
    assert.ok(res.trace!.sessionId);
  });

  test('with skill_install: instructions the skill goes in .github/copilot-instructions.md, sent in full with the first request', async () => {
    const server = await serve(() => ({ text: '<answer>42</answer>' }));
    await model(server.url, { skillInstall: 'instructions' }).complete(REQUEST);
    assert.match(server.turns[0]!.text, /<custom_instruction>\\nSKILL-BODY-9b2e/);
  });

  test("the agent's reads outside its workspace are refused, the temp directory included", async () => {
    const answers = plantAnswers();
    const probes: ScriptReply[] = [
      { tool: 'view', input: { path: answers.file } },
      bash(`cat ${answers.file}`),
      { tool: 'view', input: { path: answers.dir } },
    ];
    const server = await serve((t) => probes[t.toolOutputs.length] ?? { text: '<answer>none</answer>' });
    const res = await model(server.url).complete(REQUEST);
    assert.ok(
      answers.file.startsWith(fs.realpathSync((await import('node:os')).tmpdir())),
      'the answers sit in the temp directory, like other rollouts',
    );
    for (const t of server.turns) assert.doesNotMatch(t.text, new RegExp(answers.secret));
    assert.deepEqual(
      res.trace!.steps.map((s) => s.ok),
      [false, false, false],
    );
    assert.match(res.trace!.steps[0]!.output!, /Permission denied/);
    fs.rmSync(answers.dir, { recursive: true });
  });

  test("a refused login is a fatal error that names the provider's key settings", async () => {
    const server = await serve(() => ({ status: 401, message: 'Incorrect API key provided' }));
    await assert.rejects(
      model(server.url).complete(REQUEST),
      (err: Error) =>
        err instanceof FatalModelError && /GitHub Copilot CLI is not logged in.*HTTP 401/.test(err.message),
    );
  });

  test('the timeout ends the agent while it waits for the model', async () => {
    const server = await serve(() => new Promise<ScriptReply>(() => {}));
    await assert.rejects(
      model(server.url, { timeoutMs: 5000 }).complete(REQUEST),
      (err: Error) => err instanceof CallFailure && err.kind === 'timeout' && /stopped/.test(err.message),
    );
  });
});
