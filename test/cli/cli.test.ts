import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

describe('skillopt CLI', () => {
  it('--help lists the commands', () => {
    const r = runCli(['--help']);
    assert.equal(r.status, 0);
    for (const cmd of ['train', 'eval', 'ui']) assert.match(r.stdout, new RegExp(`\\n\\s+${cmd}\\b`));
  });

  it('every command has --help', () => {
    for (const cmd of ['train', 'eval', 'ui']) {
      const r = runCli([cmd, '--help']);
      assert.equal(r.status, 0, cmd);
      assert.match(r.stdout, new RegExp(`Usage: skillopt ${cmd}`));
    }
    assert.match(runCli(['train', '--help']).stdout, /--cfg-options/);
  });

  it('--version prints the package version', () => {
    const r = runCli(['--version']);
    assert.equal(r.status, 0);
    assert.match(r.stdout.trim(), /^\d+\.\d+\.\d+$/);
  });

  it('bad usage exits with 2', () => {
    assert.equal(runCli(['trian']).status, 2);
    assert.equal(runCli(['train']).status, 2, 'a missing --config');
    assert.equal(runCli(['train', '--config', 'x.yaml', '--no-such-flag']).status, 2);
  });

  it('bad input exits with 2 and names the file and key', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'bad.yaml': 'model:\n  backend: sim\ntrain:\n  batch_size: -3\n' });
    const r = runCli(['train', '--config', path.join(dir, 'bad.yaml')]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /bad\.yaml: train\.batch_size/);
    const missing = runCli(['train', '--config', path.join(dir, 'nope.yaml')]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /config file not found/);
  });

  it('a missing API key is bad input: exit 2, naming the variable to set, nothing written', () => {
    const dir = tmpDir();
    writeFiles(dir, { 'skill.md': '# Skill\n\nAnswer briefly.\n' });
    const config = path.join(import.meta.dirname, '../../configs/sim/default.yaml');
    // Set but empty counts as unset, whatever the shell running the tests holds.
    const env = { OPENAI_API_KEY: '', TARGET_OPENAI_API_KEY: '', OPTIMIZER_OPENAI_API_KEY: '' };
    const runs = [
      ['train', '--config', config, '--set', 'model.backend=openai_chat', '--out', path.join(dir, 'run')],
      [
        'eval',
        '--config',
        config,
        '--set',
        'model.backend=openai_chat',
        '--skill',
        path.join(dir, 'skill.md'),
        '--out',
        path.join(dir, 'eval'),
      ],
    ];
    for (const args of runs) {
      const r = runCli(args, { env, cwd: dir });
      assert.equal(r.status, 2, `${args[0]}: ${r.stderr}`);
      assert.match(
        r.stderr,
        /^skillopt: model\.target: the OpenAI key is missing: set the environment variable OPENAI_API_KEY /,
      );
    }
    assert.deepEqual(fs.readdirSync(dir), ['skill.md']);
  });

  it('an OpenAI-compatible backend or Azure without an endpoint is refused at once: exit 2 naming base_url and its variable, nothing written', () => {
    const dir = tmpDir();
    const config = path.join(import.meta.dirname, '../../configs/sim/default.yaml');
    // A key is at hand: without an endpoint it must go nowhere (no retries to wait through either way).
    const env: Record<string, string> = {
      OPENAI_API_KEY: 'sk-test-0123456789',
      OPENAI_COMPATIBLE_API_KEY: 'sk-test-0123456789',
      QWEN_CHAT_API_KEY: 'sk-test-0123456789',
      ...Object.fromEntries(
        ['OPENAI_COMPATIBLE_BASE_URL', 'QWEN_CHAT_BASE_URL', 'AZURE_OPENAI_ENDPOINT', 'OPENAI_BASE_URL'].flatMap(
          (v) => [
            [v, ''],
            [`TARGET_${v}`, ''],
          ],
        ),
      ),
    };
    const role = (...sets: string[]) => [
      'train',
      '--config',
      config,
      '--cfg-options',
      'model.target.model=m',
      'model.target.max_retries=0',
      ...sets,
      '--out',
      path.join(dir, 'run'),
    ];
    const cases: [string[], RegExp][] = [
      [
        role('model.target.backend=openai_compatible'),
        /^skillopt: model\.target: the OpenAI-compatible endpoint is not set: set model\.target\.base_url, or the environment variable OPENAI_COMPATIBLE_BASE_URL/,
      ],
      [
        role('model.target.backend=vllm'),
        /model\.target\.base_url, or the environment variable OPENAI_COMPATIBLE_BASE_URL/,
      ],
      [
        role('model.target.backend=ollama'),
        /model\.target\.base_url, or the environment variable OPENAI_COMPATIBLE_BASE_URL/,
      ],
      [
        role('model.target.backend=qwen_chat'),
        /^skillopt: model\.target: the Qwen endpoint is not set: set model\.target\.base_url, or the environment variable QWEN_CHAT_BASE_URL/,
      ],
      [
        role('model.backend=openai_chat', 'model.target.options={provider: azure}'),
        /^skillopt: model\.target: the Azure OpenAI endpoint is not set: set model\.target\.base_url, or the environment variable AZURE_OPENAI_ENDPOINT/,
      ],
      [
        role('model.backend=azure_openai'),
        /^skillopt: model\.target: the Azure OpenAI endpoint is not set: set model\.target\.base_url, or the environment variable AZURE_OPENAI_ENDPOINT/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = runCli(args, { env, cwd: dir });
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stdout + r.stderr, /api\.openai\.com|resume/);
    }
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it('an eval refused for a missing key writes nothing, not even the split of its data', () => {
    const dir = tmpDir();
    const out = path.join(dir, 'eval');
    const r = runCli(
      [
        'eval',
        '--config',
        'configs/tasks/example.yaml',
        '--set',
        'model.backend=anthropic',
        '--set',
        'model.target.base_url=',
        '--set',
        'model.optimizer.base_url=',
        '--skill',
        'configs/tasks/seed_skill.md',
        '--out',
        out,
      ],
      { env: { OPENAI_API_KEY: '', TARGET_OPENAI_API_KEY: '' } },
    );
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /the Anthropic key is missing: set the environment variable OPENAI_API_KEY/);
    assert.deepEqual(fs.readdirSync(dir), [], 'no output directory, no _generated_splits');
  });

  it('so is a malformed endpoint: exit 2, naming the key, nothing written, nothing called', () => {
    const dir = tmpDir();
    const config = path.join(import.meta.dirname, '../../configs/sim/default.yaml');
    const env = { OPENAI_API_KEY: 'sk-test' };
    const role = (...sets: string[]) => [
      'train',
      '--config',
      config,
      '--cfg-options',
      'model.target.backend=openai_compatible',
      'model.target.model=m',
      ...sets,
      '--out',
      path.join(dir, 'run'),
    ];
    const cases: [string[], RegExp][] = [
      [role('model.target.base_url=not a url'), /^skillopt: model\.target\.base_url: 'not a url' is not a URL/],
      [
        role('model.target.base_url=ftp://127.0.0.1/v1'),
        /^skillopt: model\.target\.base_url: 'ftp:\/\/127\.0\.0\.1\/v1' must start with http:\/\/ or https:\/\//,
      ],
    ];
    for (const [args, message] of cases) {
      const r = runCli(args, { env, cwd: dir });
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
    assert.deepEqual(fs.readdirSync(dir), []);
  });
});
