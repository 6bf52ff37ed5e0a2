import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadConfig, type LoadedConfig } from '../../src/config/load.ts';
import { redact } from '../../src/config/redact.ts';
import { ConfigError } from '../../src/errors.ts';
import { buildBackendModel } from '../../src/model/stack.ts';
import { FatalModelError } from '../../src/model/types.ts';
import { ROOT } from '../helpers/cli.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { rejects } from './rejects.ts';

const ORIGINAL = path.join(ROOT, 'test/fixtures/original-configs');
const BASE = path.join(ORIGINAL, '_base_/default.yaml');
const noEnv = { environment: {} };

/** A config inheriting the original's base file, with these sections on top. */
function overBase(sections: Record<string, unknown>, overrides: string[] = [], environment: Record<string, string> = {}): LoadedConfig {
  const dir = tmpDir();
  writeFiles(dir, { 'c.yaml': stringify({ _base_: BASE, ...sections }) });
  return loadConfig(path.join(dir, 'c.yaml'), { environment, overrides });
}

describe("the original's config files load unchanged", () => {
  it('the base file, the soft-gate feature file, searchqa and livemathematicianbench load with warnings only', () => {
    for (const rel of ['_base_/default.yaml', 'features/soft_gate.yaml', 'searchqa/default.yaml', 'livemathematicianbench/default.yaml']) {
      const loaded = loadConfig(path.join(ORIGINAL, rel), noEnv);
      assert.equal(loaded.config.model.target.backend, 'openai_chat', rel);
      assert.equal(loaded.config.model.target.model, 'gpt-5.5', rel);
      // The non-blank harness settings of the base are named, once each, with what is missing.
      assert.equal(loaded.warnings.length, 2, `${rel}: ${loaded.warnings.join('\n')}`);
      assert.match(loaded.warnings[0]!, /_base_\/default\.yaml: model\.claude_code_exec_path, model\.claude_code_exec_use_sdk, model\.claude_code_exec_effort, model\.claude_code_exec_max_thinking_tokens: the claude_code_exec backend .* is not built yet; ignored$/);
      assert.match(loaded.warnings[1]!, /model\.codex_trace_to_optimizer: the codex_exec backend .* is not built yet; ignored$/);
      // Blank keys ask for nothing and are not mentioned; neither is a key of a backend no role uses.
      assert.doesNotMatch(loaded.warnings.join('\n'), /codex_exec_sandbox|minimax|qwen|azure|human_feedback/);
    }
    const searchqa = loadConfig(path.join(ORIGINAL, 'searchqa/default.yaml'), noEnv).config;
    assert.equal(searchqa.train.train_size, 400);
    assert.equal(searchqa.env.workers, 24);
    const soft = loadConfig(path.join(ORIGINAL, 'features/soft_gate.yaml'), noEnv).config;
    assert.equal(soft.evaluation.gate_metric, 'soft');
  });

  it("the base's Azure settings reach the roles that use Azure OpenAI", () => {
    const { config } = loadConfig(BASE, noEnv);
    for (const role of ['target', 'optimizer'] as const) {
      assert.equal(config.model[role].options.api_version, '2024-12-01-preview');
      assert.equal(config.model[role].options.ad_scope, 'https://cognitiveservices.azure.com/.default');
      assert.equal(config.model[role].base_url, '', 'a blank endpoint sets nothing');
    }
  });

  it('docvqa and officeqa load too, with warnings only', () => {
    const docvqa = loadConfig(path.join(ORIGINAL, 'docvqa/default.yaml'), noEnv);
    assert.equal(docvqa.config.env.image_detail, 'auto');
    const officeqa = loadConfig(path.join(ORIGINAL, 'officeqa/default.yaml'), noEnv);
    assert.equal(officeqa.warnings.filter((w) => /env\.(search_\w+|max_queries_per_turn) is not supported yet/.test(w)).length, 6);
  });

  it('spreadsheetbench and alfworld load too, with warnings only', () => {
    const sheets = loadConfig(path.join(ORIGINAL, 'spreadsheetbench/default.yaml'), noEnv);
    assert.deepEqual([sheets.config.env.name, sheets.config.env.mode, sheets.config.env.data_root], ['spreadsheetbench', 'multi', 'data/spreadsheetbench_verified_400']);
    const alfworld = loadConfig(path.join(ORIGINAL, 'alfworld/default.yaml'), noEnv);
    assert.deepEqual([alfworld.config.env.name, alfworld.config.env.max_steps, alfworld.config.env.workers], ['alfworld', 50, 8]);
    assert.equal(alfworld.warnings.filter((w) => /env\.max_api_workers is not supported yet and is ignored/.test(w)).length, 1);
  });

  it('human_feedback: enabled is named as not built; disabled passes in silence; a misspelt key is an error with a suggestion', () => {
    assert.equal(overBase({ human_feedback: { enabled: false } }).warnings.length, 2);
    const on = overBase({ human_feedback: { enabled: true } });
    assert.equal(on.warnings.filter((w) => /human_feedback\.enabled: human review of the gate decisions is not built yet/.test(w)).length, 1);
    rejects(() => overBase({ human_feedback: { enabeld: true } }), /unknown key 'human_feedback\.enabeld'/, /did you mean 'enabled'/);
  });
});

describe("the original's backend keys", () => {
  it('a misspelt key is still an error, naming the file, with a suggestion', () => {
    rejects(() => overBase({ model: { codex_exec_sandbx: 'read-only' } }), /c\.yaml: unknown key 'model\.codex_exec_sandbx'/, /did you mean 'codex_exec_sandbox'/);
    rejects(() => overBase({}, ['model.qwen_chat_thinkng_mode=enabled']), /--cfg-options: unknown key 'model\.qwen_chat_thinkng_mode'/, /did you mean 'qwen_chat_thinking_mode'/);
  });

  it('a key of a backend not built yet is named once, in the file and with the key that set it, also in the flat spelling', () => {
    const w = overBase({ model: { codex_exec_sandbox: 'read-only', codex_path: '/opt/codex' } }).warnings;
    const codex = w.filter((x) => x.includes('codex_exec backend'));
    assert.equal(codex.length, 2, w.join('\n')); // one per file: the child's keys, the base's trace switch
    assert.match(codex.find((x) => x.includes('c.yaml'))!, /c\.yaml: model\.codex_exec_sandbox, model\.codex_path: the codex_exec backend .* not built yet; ignored/);
    const dir = tmpDir();
    writeFiles(dir, { 'flat.yaml': 'env: sim\nmodel_backend: sim\ncopilot_exec_path: /usr/bin/copilot\n' });
    const flat = loadConfig(path.join(dir, 'flat.yaml'), noEnv);
    assert.deepEqual(flat.warnings, [`${dir}/flat.yaml: copilot_exec_path: the GitHub Copilot CLI backends (copilot_chat, copilot_exec) are not built yet; ignored`]);
  });

  it('Azure OpenAI: endpoint, API version and auth mode map onto each role, the role-specific key first and the role’s own setting above both', () => {
    const { config } = overBase({
      model: {
        azure_openai_endpoint: 'https://shared.example.net/',
        target_azure_openai_endpoint: 'https://target.example.net/',
        target_azure_openai_api_version: '2025-01-01-preview',
        azure_openai_auth_mode: 'api_key',
      },
    });
    assert.equal(config.model.optimizer.base_url, 'https://shared.example.net/');
    assert.equal(config.model.target.base_url, 'https://target.example.net/');
    assert.equal(config.model.target.options.provider, 'azure');
    assert.equal(config.model.target.options.api_version, '2025-01-01-preview');
    assert.equal(config.model.optimizer.options.api_version, '2024-12-01-preview');
    assert.equal(config.model.optimizer.options.auth, 'api_key');
    // The judge falls back to the optimizer, with what the original's keys gave it.
    assert.equal(config.model.judge.base_url, 'https://shared.example.net/');
    assert.equal(config.model.judge.options?.provider, 'azure');
    const own = overBase({ model: { azure_openai_endpoint: 'https://shared.example.net/', target: { base_url: 'https://mine.example.net/' } } }).config;
    assert.equal(own.model.target.base_url, 'https://mine.example.net/');
    // The original's older spelling fills in when the newer key is blank.
    assert.equal(overBase({ model: { azure_endpoint: 'https://legacy.example.net/' } }).config.model.target.base_url, 'https://legacy.example.net/');
    rejects(() => overBase({ model: { azure_openai_auth_mode: 'kerberos' } }), /c\.yaml: model\.azure_openai_auth_mode: unknown Azure auth mode 'kerberos'/);
    const mi = overBase({ model: { azure_openai_auth_mode: 'managed_identity' } }).warnings;
    assert.equal(mi.filter((x) => /model\.azure_openai_auth_mode: Azure managed-identity authentication is not built yet/.test(x)).length, 1);
  });

  it('a key held in a config file is never kept: the warning names the variable to set, and the value is nowhere', () => {
    const secret = 'sk-config-secret-123456';
    const loaded = overBase({ model: { target_azure_openai_api_key: secret, minimax_api_key: secret } }, [`model.qwen_chat_api_key=${secret}`]);
    const all = `${loaded.warnings.join('\n')}\n${JSON.stringify(loaded.config)}\n${JSON.stringify(redact(loaded.config, loaded.secretPaths))}`;
    assert.ok(!all.includes(secret));
    assert.ok(loaded.warnings.some((w) => /model\.target_azure_openai_api_key: keys are read from environment variables only.*set TARGET_AZURE_OPENAI_API_KEY/.test(w)));
    assert.ok(loaded.warnings.some((w) => /--cfg-options: model\.qwen_chat_api_key: .*set QWEN_CHAT_API_KEY/.test(w)));
    assert.ok(loaded.warnings.some((w) => /model\.minimax_api_key: .*set MINIMAX_API_KEY/.test(w)));
  });

  it("qwen_chat_thinking_mode sets the Qwen role's thinking option (role-specific first); a bad mode or a conflict with the older switch is an error", () => {
    const { config } = overBase({ model: { backend: 'qwen_chat', qwen_chat_thinking_mode: 'disabled', target_qwen_chat_thinking_mode: 'enabled', optimizer_qwen_chat_thinking_mode: 'disabled' } });
    assert.equal(config.model.target.backend, 'qwen_chat');
    assert.equal(config.model.target.options.thinking_mode, 'enabled');
    assert.equal(config.model.optimizer.backend, 'openai_chat');
    assert.equal('thinking_mode' in config.model.optimizer.options, false, 'the optimizer is not on Qwen');
    assert.equal(overBase({ model: { backend: 'qwen', qwen_chat_enable_thinking: true } }).config.model.target.options.thinking_mode, 'enabled');
    rejects(() => overBase({ model: { backend: 'qwen', qwen_chat_thinking_mode: 'sometimes' } }), /c\.yaml: model\.qwen_chat_thinking_mode: expected one of server_default, enabled, disabled/);
    rejects(() => overBase({ model: { backend: 'qwen', qwen_chat_thinking_mode: 'disabled', qwen_chat_enable_thinking: true } }), /qwen_chat_thinking_mode is 'disabled' but model\.qwen_chat_enable_thinking .* says 'enabled'/);
  });

  it("MiniMax: the base's string values become the MiniMax role's settings; minimax_model names its model; the output cap is named as not supported", () => {
    const loaded = overBase({ model: { backend: 'minimax', minimax_region: 'cn_zh', minimax_model: 'MiniMax-M2.5', target_minimax_base_url: 'https://mm.example.net/v1' } });
    const t = loaded.config.model.target;
    assert.equal(t.backend, 'minimax_chat');
    assert.equal(t.model, 'MiniMax-M2.5');
    assert.equal(t.temperature, 0.7);
    assert.equal(t.options.enable_thinking, false);
    assert.equal(t.options.region, 'cn_zh');
    assert.equal(t.base_url, 'https://mm.example.net/v1');
    assert.equal(loaded.warnings.filter((w) => /model\.minimax_max_tokens: a per-backend cap on output tokens is not supported/.test(w)).length, 1);
    // An explicit model is kept.
    assert.equal(overBase({ model: { backend: 'minimax', target: { model: 'MiniMax-M1' } } }).config.model.target.model, 'MiniMax-M1');
  });

  describe('on the wire', () => {
    let fake: FakeProvider;
    before(async () => {
      fake = await startFakeProvider({});
    });
    after(() => fake.close());

    it('Azure keys of the original reach the Azure deployment URL; the Qwen thinking key reaches chat_template_kwargs', async () => {
      const azure = overBase({ model: { azure_openai_endpoint: fake.url, target_azure_openai_api_version: '2025-01-01-preview', azure_openai_auth_mode: 'api_key' } });
      const env = { AZURE_OPENAI_API_KEY: 'az-key' };
      for (const role of ['target', 'optimizer'] as const) {
        const m = await buildBackendModel(role, azure.config.model[role], azure.config, env);
        await m.complete({ purpose: 'rollout', messages: [{ role: 'user', content: 'hi' }] });
        const r = fake.requests.at(-1)!;
        assert.equal(r.path, '/openai/deployments/gpt-5.5/chat/completions');
        assert.equal(r.query['api-version'], role === 'target' ? '2025-01-01-preview' : '2024-12-01-preview');
        assert.equal(r.headers['api-key'], 'az-key');
      }
      const qwen = overBase({ model: { backend: 'qwen_chat', qwen_chat_base_url: `${fake.url}/v1`, qwen_chat_thinking_mode: 'disabled' } });
      const m = await buildBackendModel('target', qwen.config.model.target, qwen.config, {});
      await m.complete({ purpose: 'rollout', messages: [{ role: 'user', content: 'hi' }] });
      assert.deepEqual(fake.requests.at(-1)!.body.chat_template_kwargs, { enable_thinking: false });
      assert.equal(fake.requests.at(-1)!.path, '/v1/chat/completions');
    });
  });
});

describe('backend names mean what they mean in the original', () => {
  const cases: [Record<string, unknown>, RegExp[]][] = [
    [{ backend: 'claude_chat' }, [/c\.yaml: model\.backend: 'claude_chat' is the Claude Code CLI used as a chat model .* not built yet/, /Meanwhile use 'anthropic' for the Anthropic Messages API/]],
    [{ target: { backend: 'claude' } }, [/c\.yaml: model\.target\.backend: 'claude' is the original's name for 'claude_chat'/, /not built yet/, /'anthropic'/]],
    [{ backend: 'openai' }, [/model\.backend: 'openai' selects 'codex_exec' for model\.target/, /Codex CLI/, /use 'openai_chat' for the OpenAI API/]],
    [{ backend: 'codex' }, [/'codex' selects 'codex_exec'/, /not built yet/]],
    [{ optimizer: { backend: 'codex' } }, [/model\.optimizer\.backend: 'codex' is the Codex CLI used as a chat model/, /'openai_chat'/]],
    [{ backend: 'copilot' }, [/'copilot' selects 'copilot_chat'/, /GitHub Copilot CLI used as a chat model .* not built yet/]],
    [{ backend: 'claude_code_exec' }, [/model\.backend: 'claude_code_exec' is Claude Code as an agent harness/, /not built yet/]],
    [{ target: { backend: 'cursor' } }, [/'cursor' is the original's name for 'cursor_exec'/, /not built yet/]],
    [{ target: { backend: 'copilot_exec' } }, [/'copilot_exec' is the GitHub Copilot CLI as an agent harness/]],
  ];
  for (const [model, patterns] of cases) {
    it(`${JSON.stringify(model)} is refused with what it is and what to use meanwhile`, () => {
      rejects(() => overBase({ model }), ...patterns);
    });
  }

  it('the Anthropic Messages API keeps its name; the CLI backends cannot be reached through the API by any alias', async () => {
    const { config } = overBase({ model: { backend: 'anthropic' } });
    assert.equal(config.model.target.backend, 'anthropic');
    assert.equal(overBase({ model: { target: { backend: 'anthropic_chat' } } }).config.model.target.backend, 'anthropic');
    // A library user building the CLI backend directly gets the same explanation, as a fatal model error.
    await assert.rejects(
      buildBackendModel('target', { ...config.model.target, backend: 'claude_chat' }, config, {}),
      (e: unknown) => e instanceof FatalModelError && /'claude_chat' is the Claude Code CLI .* not built yet/.test(e.message),
    );
  });
});
