import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/cli.ts';
import { configWith } from '../helpers/model-config.ts';

const roles = (sections: Record<string, unknown>, overrides: string[] = []) => {
  const { config } = configWith({ _base_: path.join(ROOT, 'configs/_base_/default.yaml'), ...sections }, {}, overrides);
  const m = config.model;
  return {
    target: `${m.target.backend}:${m.target.model}`,
    optimizer: `${m.optimizer.backend}:${m.optimizer.model}`,
    judge: `${m.judge.backend}:${m.judge.model}`,
  };
};

describe('role backends from the label (the original’s table)', () => {
  it('the base config runs OpenAI on both roles', () => {
    assert.deepEqual(roles({}), {
      target: 'openai_chat:gpt-5.5',
      optimizer: 'openai_chat:gpt-5.5',
      judge: 'openai_chat:gpt-5.5',
    });
  });

  it('qwen_chat and minimax_chat labels put the target there and keep the optimizer on OpenAI', () => {
    assert.deepEqual(roles({ model: { backend: 'qwen' } }), {
      target: 'qwen_chat:Qwen/Qwen3.5-4B',
      optimizer: 'openai_chat:gpt-5.5',
      judge: 'openai_chat:gpt-5.5',
    });
    assert.equal(roles({ model: { backend: 'minimax_chat' } }).target, 'minimax_chat:MiniMax-M3');
  });

  it('anthropic and openai_compatible labels fill both roles; the OpenAI model names of the base give way to the backend default', () => {
    assert.deepEqual(roles({ model: { backend: 'anthropic' } }), {
      target: 'anthropic:claude-sonnet-4-5',
      optimizer: 'anthropic:claude-sonnet-4-5',
      judge: 'anthropic:claude-sonnet-4-5',
    });
    const compat = roles({ model: { backend: 'compat', target: { model: 'llama-3' } } });
    assert.equal(compat.target, 'openai_compatible:llama-3');
    assert.equal(compat.optimizer, 'openai_compatible:gpt-5.5');
  });

  it('a role set to openai_chat counts as unset; any other explicit backend wins, from YAML or an override', () => {
    assert.equal(
      roles({ model: { backend: 'qwen_chat', target: { backend: 'openai_chat' } } }).target,
      'qwen_chat:Qwen/Qwen3.5-4B',
    );
    assert.equal(
      roles({ model: { backend: 'qwen_chat', target: { backend: 'anthropic', model: 'claude-haiku-4-5' } } }).target,
      'anthropic:claude-haiku-4-5',
    );
    assert.equal(
      roles({ model: { backend: 'openai_compatible' } }, ['model.optimizer_backend=anthropic']).optimizer,
      'anthropic:claude-sonnet-4-5',
    );
  });

  it("the base's OpenAI model gives way under an agent backend, unless the model was set with the backend or on the command line", () => {
    assert.equal(roles({ model: { backend: 'copilot_exec' } }).target, 'copilot_exec:');
    assert.equal(
      roles({ model: { target: { backend: 'claude_code_exec' } } }).target,
      'claude_code_exec:claude-sonnet-4-6',
    );
    assert.equal(
      roles({ model: { target: { backend: 'copilot_exec', model: 'gpt-5.5' } } }).target,
      'copilot_exec:gpt-5.5',
    );
    assert.equal(
      roles({ model: { backend: 'copilot_exec' } }, ['model.target.model=gpt-5.5']).target,
      'copilot_exec:gpt-5.5',
    );
  });

  it('the judge falls back to the optimizer field by field', () => {
    const r = roles({ model: { backend: 'anthropic', judge: { model: 'claude-haiku-4-5' } } });
    assert.equal(r.judge, 'anthropic:claude-haiku-4-5');
  });
});
