/**
 * The agent CLIs as plain chat models (claude_chat, codex, copilot_chat), with the real CLIs
 * against the fake servers: the system prompt and conversation reach the model, no tools are
 * offered where the CLI allows that, and a JSON reply goes through repair and one corrective retry.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { ClaudeCodeHarness } from '../../../src/model/harness/claude-code.ts';
import { CliChatModel } from '../../../src/model/harness/cli-chat-model.ts';
import { CodexHarness } from '../../../src/model/harness/codex.ts';
import { CopilotHarness } from '../../../src/model/harness/copilot.ts';
import { completeJson } from '../../../src/model/structured.ts';
import { FatalModelError, type ChatRequest } from '../../../src/model/types.ts';
import { cliPath, harnessSettings, missingCli } from '../../helpers/agent-cli.ts';
import { fakeAgentServers } from '../../helpers/fake-agent-server.ts';

const serve = fakeAgentServers();

const Edits = z.object({ edits: z.array(z.object({ op: z.enum(['append', 'replace']), content: z.string() })) });
const ASK: ChatRequest & { schema: typeof Edits } = {
  purpose: 'analyst',
  system: 'SYSTEM-PROMPT-51aa: you improve skills.',
  messages: [{ role: 'user', content: 'Propose one edit for the failures below.' }],
  schema: Edits,
};

describe('claude_chat (real claude CLI)', { skip: missingCli('claude') }, () => {
  const model = (url: string) =>
    new CliChatModel(
      new ClaudeCodeHarness(
        harnessSettings({
          path: cliPath('claude'),
          baseUrl: url,
          model: 'claude-sonnet-4-5',
          env: { ANTHROPIC_API_KEY: 'sk-ant-test' },
        }),
      ),
      { backend: 'claude_chat', model: 'claude-sonnet-4-5' },
    );

  test("the system prompt replaces Claude Code's own, no tools are offered, and a bad JSON reply is corrected once", async () => {
    const server = await serve((t) =>
      t.text.includes('could not be used')
        ? { text: '{"edits":[{"op":"append","content":"Check units."}]}' }
        : { text: 'Here is my idea: append a rule about units.' },
    );
    const { value } = await completeJson(model(server.url), ASK);
    assert.deepEqual(value, { edits: [{ op: 'append', content: 'Check units.' }] });
    assert.equal(server.turns.length, 2);
    const first = server.turns[0]!.request.body;
    assert.ok(first.system.some((s: { text: string }) => s.text.includes('SYSTEM-PROMPT-51aa')));
    assert.ok(
      !JSON.stringify(first.system).includes('software engineering tasks'),
      "Claude Code's agent prompt is gone",
    );
    assert.deepEqual(first.tools ?? [], []);
    assert.match(server.turns[0]!.text, /Propose one edit[\s\S]*It must follow this JSON Schema/);
  });

  test('images and tools are refused with what to use instead', async () => {
    const m = model('http://127.0.0.1:9');
    await assert.rejects(
      m.complete({
        purpose: 'judge',
        messages: [{ role: 'user', content: [{ type: 'image', image: 'data:image/png;base64,AAAA' }] }],
      }),
      (err: Error) => err instanceof FatalModelError && /anthropic backend/.test(err.message),
    );
    await assert.rejects(
      m.complete({
        purpose: 'rollout',
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ name: 'grep', description: '', parameters: {} }],
      }),
      (err: Error) => err instanceof FatalModelError && /answers in text only/.test(err.message),
    );
  });
});

describe('codex as a chat model (real codex CLI)', { skip: missingCli('codex') }, () => {
  test('system prompt and conversation go in the prompt; the final message is the reply', async () => {
    const server = await serve(() => ({ text: '{"edits":[{"op":"replace","content":"Use YYYY-MM-DD."}]}' }));
    const model = new CliChatModel(
      new CodexHarness(harnessSettings({ path: cliPath('codex'), baseUrl: `${server.url}/v1` })),
      { backend: 'codex', model: 'gpt-5.5' },
    );
    const { value, response } = await completeJson(model, ASK);
    assert.deepEqual(value, { edits: [{ op: 'replace', content: 'Use YYYY-MM-DD.' }] });
    assert.match(server.turns[0]!.text, /SYSTEM-PROMPT-51aa: you improve skills\.\\n\\n---\\n\\nPropose one edit/);
    assert.equal(response.usage.input, 120);
  });
});

describe('copilot_chat (real copilot CLI)', { skip: missingCli('copilot') }, () => {
  test('no tools are offered and the reply is the final message', async () => {
    const server = await serve(() => ({ text: '{"edits":[{"op":"append","content":"Name the unit."}]}' }));
    const model = new CliChatModel(
      new CopilotHarness(harnessSettings({ path: cliPath('copilot'), baseUrl: `${server.url}/v1` })),
      { backend: 'copilot_chat', model: 'gpt-5.5' },
    );
    const { value } = await completeJson(model, ASK);
    assert.deepEqual(value, { edits: [{ op: 'append', content: 'Name the unit.' }] });
    assert.deepEqual(server.turns[0]!.request.body.tools ?? [], []);
    assert.match(server.turns[0]!.text, /SYSTEM-PROMPT-51aa/);
  });
});
