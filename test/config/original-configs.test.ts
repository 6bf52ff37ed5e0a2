import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadConfig, type LoadedConfig } from '../../src/config/load.ts';
import { redact } from '../../src/config/redact.ts';
import { buildBackendModel } from '../../src/model/stack.ts';
import { ROOT } from '../helpers/cli.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { rejects } from './rejects.ts';

const ORIGINAL = path.join(ROOT, 'test/fixtures/original-configs');
const BASE = path.join(ORIGINAL, '_base_/default.yaml');
const noEnv = { environment: {} };

/** A config inheriting the original's base file, with these sections on top. */
function overBase(
  sections: Record<string, unknown>,
  overrides: string[] = [],
  environment: Record<string, string> = {},
): LoadedConfig {
  const dir = tmpDir();
  writeFiles(dir, { 'c.yaml': stringify({ _base_: BASE, ...sections }) });
  return loadConfig(path.join(dir, 'c.yaml'), { environment, overrides });
}

describe("the original's config files load unchanged", () => {
  it('the base file, the soft-gate feature file, searchqa and livemathematicianbench load with no warning', () => {
    for (const rel of [
      '_base_/default.yaml',
      'features/soft_gate.yaml',
      'searchqa/default.yaml',
      'livemathematicianbench/default.yaml',
    ]) {
      const loaded = loadConfig(path.join(ORIGINAL, rel), noEnv);
      assert.equal(loaded.config.model.target.backend, 'openai_chat', rel);
      assert.equal(loaded.config.model.target.model, 'gpt-5.5', rel);
      // The base's agent settings (claude_code_exec_*) concern no role here: nothing to say.
      assert.deepEqual(loaded.warnings, [], rel);
      assert.equal(loaded.config.model.trace_to_optimizer, true, rel);
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
    assert.equal(
      officeqa.warnings.filter((w) => /env\.(search_\w+|max_queries_per_turn) is not supported yet/.test(w)).length,
      6,
    );
  });

  it('spreadsheetbench and alfworld load too, with warnings only', () => {
    const sheets = loadConfig(path.join(ORIGINAL, 'spreadsheetbench/default.yaml'), noEnv);
    assert.deepEqual(
      [sheets.config.env.name, sheets.config.env.mode, sheets.config.env.data_root],
      ['spreadsheetbench', 'multi', 'data/spreadsheetbench_verified_400'],
    );
    const alfworld = loadConfig(path.join(ORIGINAL, 'alfworld/default.yaml'), noEnv);
    assert.deepEqual(
      [alfworld.config.env.name, alfworld.config.env.max_steps, alfworld.config.env.workers],
      ['alfworld', 50, 8],
    );
    assert.equal(
      alfworld.warnings.filter((w) => /env\.max_api_workers is not supported yet and is ignored/.test(w)).length,
      1,
    );
  });

  it('human_feedback: enabled is named as not built; disabled passes in silence; a misspelt key is an error with a suggestion', () => {
    assert.equal(overBase({ human_feedback: { enabled: false } }).warnings.length, 0);
    const on = overBase({ human_feedback: { enabled: true } });
    assert.equal(
      on.warnings.filter((w) => /human_feedback\.enabled: human review of the gate decisions is not built yet/.test(w))
        .length,
      1,
    );
    rejects(
      () => overBase({ human_feedback: { enabeld: true } }),
      /unknown key 'human_feedback\.enabeld'/,
      /did you mean 'enabled'/,
    );
  });
});

describe("the original's backend keys", () => {
  it('a misspelt key is still an error, naming the file, with a suggestion', () => {
    rejects(
      () => overBase({ model: { codex_exec_sandbx: 'read-only' } }),
      /c\.yaml: unknown key 'model\.codex_exec_sandbx'/,
      /did you mean 'codex_exec_sandbox'/,
    );
    rejects(
      () => overBase({}, ['model.qwen_chat_thinkng_mode=enabled']),
      /overrides: unknown key 'model\.qwen_chat_thinkng_mode'/,
      /did you mean 'qwen_chat_thinking_mode'/,
    );
  });

  it('the agent keys are honoured for the roles on their backend: path, sandbox, effort, web search, home, timeout, model', () => {
    const codex = overBase({
      model: {
        backend: 'codex',
        codex_path: '/opt/codex',
        codex_exec_path: '/opt/bin/codex',
        sandbox: 'workspace-write',
        codex_exec_reasoning_effort: 'high',
        codex_exec_web_search: true,
      },
    });
    for (const role of ['target', 'optimizer'] as const) {
      const rc = codex.config.model[role];
      assert.equal(rc.backend, 'codex_exec');
      assert.equal(rc.options.path, '/opt/bin/codex', 'the canonical key wins over its alias');
      assert.equal(rc.options.allow_writes, true);
      assert.equal(rc.reasoning_effort, 'high');
      assert.deepEqual(rc.options.config, { web_search: 'live' });
    }
    assert.deepEqual(codex.warnings, []);
    // The role's own setting wins over the original's key.
    const own = overBase({
      model: { backend: 'codex', codex_exec_sandbox: 'workspace-write', target: { options: { allow_writes: false } } },
    }).config;
    assert.equal(own.model.target.options.allow_writes, false);
    assert.equal(own.model.optimizer.options.allow_writes, true);

    const claude = overBase({ model: { target: { backend: 'claude_code_exec' }, claude_code_exec_effort: 'max' } });
    // The base's claude_code_exec_path (claude), use_sdk (auto), effort and thinking tokens apply, silently.
    assert.deepEqual(claude.warnings, []);
    assert.equal(claude.config.model.target.options.path, 'claude');
    assert.equal(claude.config.model.target.reasoning_effort, 'xhigh');
    assert.deepEqual(claude.config.model.target.options.env, { MAX_THINKING_TOKENS: '16384' });

    const copilot = overBase({
      model: {
        backend: 'copilot',
        copilot_exec_path: '/opt/copilot',
        copilot_exec_home: '/tmp/ch',
        copilot_chat_timeout: 90,
        copilot_chat_target_model: 'gpt-5.4',
      },
    });
    assert.deepEqual(
      [
        copilot.config.model.target.options.path,
        copilot.config.model.target.options.home,
        copilot.config.model.target.timeout_s,
      ],
      ['/opt/copilot', '/tmp/ch', 90],
    );
    assert.equal(copilot.config.model.target.model, 'gpt-5.4');
    assert.equal(copilot.config.model.optimizer.model, '', 'blank: the CLI picks');

    const cursor = overBase({
      model: {
        target: { backend: 'cursor_exec' },
        cursor_exec_path: '/opt/cursor-agent',
        cursor_exec_sandbox: 'enabled',
      },
    });
    assert.equal(cursor.config.model.target.options.path, '/opt/cursor-agent');
    assert.deepEqual(cursor.warnings, []);
    assert.equal(overBase({ model: { codex_trace_to_optimizer: false } }).config.model.trace_to_optimizer, false);
  });

  it('an agent key that cannot be honoured is named once, with why, only when a role uses its backend; a bad value is an error', () => {
    const w = overBase({
      model: {
        backend: 'codex',
        codex_exec_sandbox: 'danger-full-access',
        codex_exec_profile: 'fast',
        codex_exec_use_sdk: 'sdk',
        codex_exec_network_access: true,
        codex_exec_approval_policy: 'on-request',
      },
    }).warnings;
    assert.equal(w.length, 5, w.join('\n'));
    assert.ok(
      w.some((x) =>
        /c\.yaml: model\.codex_exec_sandbox: danger-full-access is not supported; ignored \(the agent stays in its sandbox/.test(
          x,
        ),
      ),
    );
    assert.ok(
      w.some((x) => /model\.codex_exec_profile: a profile of the user's Codex config\.toml is not read/.test(x)),
    );
    assert.ok(w.some((x) => /model\.codex_exec_use_sdk: the agent SDKs are not used/.test(x)));
    assert.ok(w.some((x) => /model\.codex_exec_network_access: network access .* is not supported/.test(x)));
    assert.ok(w.some((x) => /model\.codex_exec_approval_policy: an approval policy other than never/.test(x)));
    // No role on Codex: nothing to say about Codex keys.
    assert.deepEqual(
      overBase({ model: { codex_exec_sandbox: 'danger-full-access', codex_path: '/opt/codex' } }).warnings,
      [],
    );
    rejects(
      () => overBase({ model: { backend: 'codex', codex_exec_sandbox: 'sandboxed' } }),
      /c\.yaml: model\.codex_exec_sandbox: expected read-only, workspace-write or danger-full-access/,
    );
    rejects(
      () => overBase({ model: { target: { backend: 'claude_code_exec' }, claude_code_exec_effort: 'turbo' } }),
      /model\.claude_code_exec_effort: expected one of none, minimal, low, medium, high, xhigh/,
    );
    const dir = tmpDir();
    writeFiles(dir, {
      'flat.yaml':
        'env: sim\nmodel_backend: sim\ntarget_backend: copilot_exec\ncopilot_exec_path: /usr/bin/copilot\ncopilot_exec_allow_all_tools: true\n',
    });
    const flat = loadConfig(path.join(dir, 'flat.yaml'), noEnv);
    assert.equal(flat.config.model.target.options.path, '/usr/bin/copilot');
    assert.deepEqual(flat.warnings, [
      `${dir}/flat.yaml: copilot_exec_allow_all_tools: allowing all tools is not supported; ignored (options.allow_writes lets the agent write in its workspace)`,
    ]);
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
    const own = overBase({
      model: {
        azure_openai_endpoint: 'https://shared.example.net/',
        target: { base_url: 'https://mine.example.net/' },
      },
    }).config;
    assert.equal(own.model.target.base_url, 'https://mine.example.net/');
    // The original's older spelling fills in when the newer key is blank.
    assert.equal(
      overBase({ model: { azure_endpoint: 'https://legacy.example.net/' } }).config.model.target.base_url,
      'https://legacy.example.net/',
    );
    rejects(
      () => overBase({ model: { azure_openai_auth_mode: 'kerberos' } }),
      /c\.yaml: model\.azure_openai_auth_mode: unknown Azure auth mode 'kerberos'/,
    );
    const mi = overBase({ model: { azure_openai_auth_mode: 'managed_identity' } }).warnings;
    assert.equal(
      mi.filter((x) => /model\.azure_openai_auth_mode: Azure managed-identity authentication is not built yet/.test(x))
        .length,
      1,
    );
  });

  it('a key held in a config file is never kept: the warning names the variable to set, and the value is nowhere', () => {
    const secret = 'sk-config-secret-123456';
    const loaded = overBase({ model: { target_azure_openai_api_key: secret, minimax_api_key: secret } }, [
      `model.qwen_chat_api_key=${secret}`,
    ]);
    const all = `${loaded.warnings.join('\n')}\n${JSON.stringify(loaded.config)}\n${JSON.stringify(redact(loaded.config, loaded.secretPaths))}`;
    assert.ok(!all.includes(secret));
    assert.ok(
      loaded.warnings.some((w) =>
        /model\.target_azure_openai_api_key: keys are read from environment variables only.*set TARGET_AZURE_OPENAI_API_KEY/.test(
          w,
        ),
      ),
    );
    assert.ok(loaded.warnings.some((w) => /overrides: model\.qwen_chat_api_key: .*set QWEN_CHAT_API_KEY/.test(w)));
    assert.ok(loaded.warnings.some((w) => /model\.minimax_api_key: .*set MINIMAX_API_KEY/.test(w)));
  });

  it("qwen_chat_thinking_mode sets the Qwen role's thinking option (role-specific first); a bad mode or a conflict with the older switch is an error", () => {
    const { config } = overBase({
      model: {
        backend: 'qwen_chat',
        qwen_chat_thinking_mode: 'disabled',
        target_qwen_chat_thinking_mode: 'enabled',
        optimizer_qwen_chat_thinking_mode: 'disabled',
      },
    });
    assert.equal(config.model.target.backend, 'qwen_chat');
    assert.equal(config.model.target.options.thinking_mode, 'enabled');
    assert.equal(config.model.optimizer.backend, 'openai_chat');
    assert.equal('thinking_mode' in config.model.optimizer.options, false, 'the optimizer is not on Qwen');
    assert.equal(
      overBase({ model: { backend: 'qwen', qwen_chat_enable_thinking: true } }).config.model.target.options
        .thinking_mode,
      'enabled',
    );
    rejects(
      () => overBase({ model: { backend: 'qwen', qwen_chat_thinking_mode: 'sometimes' } }),
      /c\.yaml: model\.qwen_chat_thinking_mode: expected one of server_default, enabled, disabled/,
    );
    rejects(
      () =>
        overBase({ model: { backend: 'qwen', qwen_chat_thinking_mode: 'disabled', qwen_chat_enable_thinking: true } }),
      /qwen_chat_thinking_mode is 'disabled' but model\.qwen_chat_enable_thinking .* says 'enabled'/,
    );
  });

  it("MiniMax: the base's string values become the MiniMax role's settings; minimax_model names its model; the output cap is named as not supported", () => {
    const loaded = overBase({
      model: {
        backend: 'minimax',
        minimax_region: 'cn_zh',
        minimax_model: 'MiniMax-M2.5',
        target_minimax_base_url: 'https://mm.example.net/v1',
      },
    });
    const t = loaded.config.model.target;
    assert.equal(t.backend, 'minimax_chat');
    assert.equal(t.model, 'MiniMax-M2.5');
    assert.equal(t.temperature, 0.7);
    assert.equal(t.options.enable_thinking, false);
    assert.equal(t.options.region, 'cn_zh');
    assert.equal(t.base_url, 'https://mm.example.net/v1');
    assert.equal(
      loaded.warnings.filter((w) =>
        /model\.minimax_max_tokens: a per-backend cap on output tokens is not supported/.test(w),
      ).length,
      1,
    );
    // An explicit model is kept.
    assert.equal(
      overBase({ model: { backend: 'minimax', target: { model: 'MiniMax-M1' } } }).config.model.target.model,
      'MiniMax-M1',
    );
  });

  describe('on the wire', () => {
    let fake: FakeProvider;
    before(async () => {
      fake = await startFakeProvider({});
    });
    after(() => fake.close());

    it('Azure keys of the original reach the Azure deployment URL; the Qwen thinking key reaches chat_template_kwargs', async () => {
      const azure = overBase({
        model: {
          azure_openai_endpoint: fake.url,
          target_azure_openai_api_version: '2025-01-01-preview',
          azure_openai_auth_mode: 'api_key',
        },
      });
      const env = { AZURE_OPENAI_API_KEY: 'az-key' };
      for (const role of ['target', 'optimizer'] as const) {
        const m = await buildBackendModel(role, azure.config.model[role], azure.config, env);
        await m.complete({ purpose: 'rollout', messages: [{ role: 'user', content: 'hi' }] });
        const r = fake.requests.at(-1)!;
        assert.equal(r.path, '/openai/deployments/gpt-5.5/chat/completions');
        assert.equal(r.query['api-version'], role === 'target' ? '2025-01-01-preview' : '2024-12-01-preview');
        assert.equal(r.headers['api-key'], 'az-key');
      }
      const qwen = overBase({
        model: { backend: 'qwen_chat', qwen_chat_base_url: `${fake.url}/v1`, qwen_chat_thinking_mode: 'disabled' },
      });
      const m = await buildBackendModel('target', qwen.config.model.target, qwen.config, {});
      await m.complete({ purpose: 'rollout', messages: [{ role: 'user', content: 'hi' }] });
      assert.deepEqual(fake.requests.at(-1)!.body.chat_template_kwargs, { enable_thinking: false });
      assert.equal(fake.requests.at(-1)!.path, '/v1/chat/completions');
    });
  });
});

describe('backend names mean what they mean in the original', () => {
  const cases: [Record<string, unknown>, string, string][] = [
    [{ backend: 'claude_chat' }, 'claude_chat', 'claude_chat'],
    [{ target: { backend: 'claude' } }, 'claude_chat', 'openai_chat'],
    [{ backend: 'openai' }, 'codex_exec', 'codex_exec'],
    [{ backend: 'codex' }, 'codex_exec', 'codex_exec'],
    [{ optimizer: { backend: 'codex' } }, 'openai_chat', 'codex'],
    [{ backend: 'copilot' }, 'copilot_chat', 'copilot_chat'],
    [{ backend: 'claude_code_exec' }, 'claude_code_exec', 'openai_chat'],
    [{ target: { backend: 'cursor' } }, 'cursor_exec', 'openai_chat'],
    [{ backend: 'copilot_exec' }, 'copilot_exec', 'openai_chat'],
  ];
  for (const [model, target, optimizer] of cases) {
    it(`${JSON.stringify(model)}: target ${target}, optimizer ${optimizer}`, () => {
      const { config } = overBase({ model });
      assert.deepEqual([config.model.target.backend, config.model.optimizer.backend], [target, optimizer]);
    });
  }

  it('an agent CLI role gets fewer calls at once, a longer timeout and fewer retries unless the config sets them; env.exec_timeout is its timeout', () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'ours.yaml': stringify({
        _base_: path.join(ROOT, 'configs/_base_/default.yaml'),
        model: { target: { backend: 'codex_exec' } },
      }),
    });
    const ours = loadConfig(path.join(dir, 'ours.yaml'), noEnv).config.model.target;
    assert.deepEqual([ours.concurrency, ours.timeout_s, ours.max_retries], [4, 600, 2]);
    // The original's base sets env.exec_timeout: 120, its per-call limit of the code agents.
    const { config } = overBase({ model: { target: { backend: 'codex_exec' } } });
    assert.deepEqual(
      [config.model.target.concurrency, config.model.target.timeout_s, config.model.target.max_retries],
      [4, 120, 2],
    );
    assert.deepEqual(
      [config.model.optimizer.concurrency, config.model.optimizer.timeout_s, config.model.optimizer.max_retries],
      [8, 300, 5],
    );
    const set = overBase({ model: { target: { backend: 'codex_exec', concurrency: 2, timeout_s: 60 } } }).config.model
      .target;
    assert.deepEqual([set.concurrency, set.timeout_s, set.max_retries], [2, 60, 2]);
    assert.equal(
      overBase({ model: { target: { backend: 'claude_code_exec' } }, env: { exec_timeout: 900 } }).config.model.target
        .timeout_s,
      900,
    );
  });

  it('Cursor runs only as the target; the Anthropic Messages API keeps its name', () => {
    rejects(
      () => overBase({ model: { optimizer: { backend: 'cursor' } } }),
      /c\.yaml: model\.optimizer\.backend: 'cursor' is the original's name for 'cursor_exec': 'cursor_exec' is an agent harness: it can only be model\.target/,
    );
    assert.equal(overBase({ model: { backend: 'anthropic' } }).config.model.target.backend, 'anthropic');
    assert.equal(
      overBase({ model: { target: { backend: 'anthropic_chat' } } }).config.model.target.backend,
      'anthropic',
    );
  });
});
