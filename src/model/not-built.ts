/**
 * Backend names of the original whose backends are not built yet: the agent CLIs used as chat
 * models (`claude_chat`, `copilot_chat`, `codex`) and the agent harnesses (`*_exec`). They are
 * registered under the original's names and aliases so that a config naming them gets a clear
 * error (what the name means, that it is not built yet, what to use meanwhile) rather than
 * "unknown backend", and so that no alias of theirs can silently mean another backend: in the
 * original, `claude` is the Claude Code CLI (not the Anthropic API) and `openai` is Codex (not
 * the OpenAI API).
 */
import { registerBackend } from './registry.ts';
import { FatalModelError } from './types.ts';

const LATER: { name: string; aliases: string[]; defaultModel: string; what: string; meanwhile: string; targetOnly?: boolean }[] = [
  {
    name: 'claude_chat',
    aliases: ['claude'],
    defaultModel: 'claude-sonnet-4-6',
    what: 'the Claude Code CLI used as a chat model (`claude -p`, with your own Claude Code login)',
    meanwhile: "use 'anthropic' for the Anthropic Messages API (key in ANTHROPIC_API_KEY)",
  },
  {
    name: 'copilot_chat',
    aliases: ['copilot', 'copilot_cli', 'github_copilot'],
    defaultModel: '',
    what: 'the GitHub Copilot CLI used as a chat model (with your own Copilot login)',
    meanwhile: "use 'openai_chat', 'anthropic' or 'openai_compatible' with an API key",
  },
  {
    name: 'codex',
    aliases: ['openai'],
    defaultModel: 'gpt-5.5',
    what: "the Codex CLI used as a chat model (in the original SkillOpt, 'openai' names it too)",
    meanwhile: "use 'openai_chat' for the OpenAI API (key in OPENAI_API_KEY)",
  },
  {
    name: 'codex_exec',
    aliases: [],
    defaultModel: 'gpt-5.5',
    what: 'the Codex CLI as an agent harness that runs the tasks',
    meanwhile: "use 'openai_chat' for the OpenAI API as a chat model",
  },
  {
    name: 'claude_code_exec',
    aliases: [],
    defaultModel: 'claude-sonnet-4-6',
    what: 'Claude Code as an agent harness that runs the tasks',
    meanwhile: "use 'anthropic' for the Anthropic Messages API as a chat model",
    targetOnly: true,
  },
  {
    name: 'copilot_exec',
    aliases: [],
    defaultModel: '',
    what: 'the GitHub Copilot CLI as an agent harness that runs the tasks',
    meanwhile: "use a chat backend ('openai_chat', 'anthropic', 'openai_compatible')",
    targetOnly: true,
  },
  {
    name: 'cursor_exec',
    aliases: ['cursor', 'cursor_agent'],
    defaultModel: 'composer-2.5',
    what: 'the Cursor agent CLI as an agent harness that runs the tasks',
    meanwhile: "use a chat backend ('openai_chat', 'anthropic', 'openai_compatible')",
    targetOnly: true,
  },
];

for (const b of LATER) {
  const notBuilt = `'${b.name}' is ${b.what}; it is not built yet. Meanwhile ${b.meanwhile}`;
  registerBackend({
    name: b.name,
    aliases: b.aliases,
    defaultModel: b.defaultModel,
    notBuilt,
    targetOnly: b.targetOnly,
    create() {
      throw new FatalModelError(`backend ${notBuilt}`);
    },
  });
}
