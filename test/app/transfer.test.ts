/**
 * Transfer at the end of training (`evaluation.transfer_targets`): the initial and best skills
 * on each other target, with intervals and paired tests as `skillopt eval` computes them, in
 * `summary.json`.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runEvaluation, transferRole } from '../../src/app/eval/evaluate.ts';
import { loadConfig } from '../../src/config/load.ts';
import { TransferSchema } from '../../src/run/records.ts';
import { UserError } from '../../src/errors.ts';
import { runTraining } from '../../src/app/train.ts';
import { SIM_CONFIG, trainSim } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { cliPath, missingCli, testEnvironment } from '../helpers/agent-cli.ts';
import { fakeAgentServers } from '../helpers/fake-agent-server.ts';

const serve = fakeAgentServers();
const readLines = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('transfer at the end of training', () => {
  it('scores the initial and best skills on each target into summary.json, as skillopt eval does; none by default', async () => {
    const targets = ['sim:sim-2', 'sim:sim-3'];
    const { out, summary } = await trainSim([
      'train.num_epochs=1',
      `evaluation.transfer_targets=${JSON.stringify(targets)}`,
    ]);
    const transfer = TransferSchema.parse(summary.transfer);
    assert.deepEqual(
      transfer.rows.map((r) => r.target),
      targets,
    );
    assert.equal(transfer.split, 'test');
    assert.equal(transfer.n_items, 60);
    assert.ok(fs.existsSync(path.join(out, transfer.dir, 'eval_summary.json')));

    // The same evaluation, run apart on the run's initial and best skill files.
    const apart = await runEvaluation({
      loaded: loadConfig(SIM_CONFIG, { environment: {} }),
      outRoot: path.join(tmpDir('skillopt-transfer-'), 'eval'),
      configFile: SIM_CONFIG,
      skillFiles: [path.join(out, 'skills', 'skill_v0000.md'), path.join(out, 'best_skill.md')],
      split: 'test',
      targets,
      environment: {},
      out: null,
    });
    for (const [i, row] of transfer.rows.entries()) {
      const cmp = apart.comparisons[i]!;
      assert.deepEqual(row.hard, cmp.hard, `${row.target}: the paired test of the hard scores`);
      assert.deepEqual(row.soft, cmp.soft);
      const cells = apart.cells.filter((c) => c.target === cmp.target);
      assert.deepEqual(
        [row.initial.hard, row.best.hard],
        cells.map((c) => c.hard),
      );
      assert.deepEqual(row.best.hard_ci95, cells[1]!.hard_ci95);
    }
    assert.ok(
      transfer.rows.every((r) => r.best.hard > r.initial.hard && r.hard.p !== null && r.hard.p < 0.05),
      'the trained skill transfers on the simulator',
    );

    const plain = await trainSim(['train.num_epochs=1']);
    assert.equal(plain.summary.transfer, undefined);
    assert.equal(fs.existsSync(path.join(plain.out, 'transfer')), false);
  });

  it('a target that is not BACKEND:MODEL with a known backend is refused before anything is written', async () => {
    const out = path.join(tmpDir('skillopt-transfer-'), 'run');
    await assert.rejects(
      trainSim(['evaluation.transfer_targets=["nosuch:model"]'], out),
      (e: unknown) =>
        e instanceof UserError &&
        /^evaluation\.transfer_targets\[0\]: nosuch:model: unknown backend 'nosuch'/.test(e.message),
    );
    await assert.rejects(
      trainSim(['evaluation.transfer_targets=["sim"]'], out),
      /evaluation\.transfer_targets\[0\]: sim: expected BACKEND:MODEL/,
    );
    assert.equal(fs.existsSync(out), false);
  });

  it("a harness target's role: the agent's own limits, and from an object its endpoint, key variable and options", () => {
    const base = loadConfig(SIM_CONFIG, { environment: {} }).config.model.target;
    assert.deepEqual([base.concurrency, base.timeout_s, base.max_retries], [16, 300, 5]);
    // An agent CLI runs fewer tasks at once, each for longer, and a retry reruns the whole task.
    const plain = transferRole('codex_exec:gpt-5.5', base);
    assert.deepEqual(
      [plain.backend, plain.model, plain.base_url, plain.concurrency, plain.timeout_s, plain.max_retries],
      ['codex_exec', 'gpt-5.5', '', 4, 600, 2],
    );
    const given = transferRole(
      {
        backend: 'claude_code_exec',
        model: 'claude-sonnet-4-5',
        base_url: 'http://127.0.0.1:9',
        api_key_env: 'MY_KEY',
        timeout_s: 60,
        options: { path: 'claude' },
      },
      base,
    );
    assert.deepEqual(
      [given.backend, given.base_url, given.api_key_env, given.options, given.concurrency, given.timeout_s],
      ['claude_code_exec', 'http://127.0.0.1:9', 'MY_KEY', { path: 'claude' }, 4, 60],
    );
    // The same backend as the config's target keeps its settings; the model left out is the backend's default.
    assert.deepEqual(
      [transferRole({ backend: 'sim' }, base).model, transferRole({ backend: 'sim' }, base).concurrency],
      ['', 16],
    );
    assert.throws(() => transferRole({ backend: 'nosuch' }, base), /nosuch: unknown backend 'nosuch'/);
    // The config refuses, naming the entry: a key a role does not have, a mapping without a backend, neither form.
    const refused = (value: string) => () =>
      loadConfig(SIM_CONFIG, { overrides: [`evaluation.transfer_targets=${value}`], environment: {} });
    assert.throws(
      refused('[{"backend":"codex_exec","url":"x"}]'),
      /unknown key 'evaluation\.transfer_targets\.0\.url'/,
    );
    assert.throws(
      refused('["sim:x",{"model":"gpt-5.5"}]'),
      /evaluation\.transfer_targets\.1: backend: expected string, received undefined/,
    );
    assert.throws(
      refused('[5]'),
      /evaluation\.transfer_targets\.0: expected BACKEND:MODEL or a mapping of role settings with its backend, got number 5/,
    );
  });

  it('an agent harness as a transfer target: the real Codex CLI, pointed at its endpoint, reads each skill from its skill folder', {
    skip: missingCli('codex'),
  }, async () => {
    // The agent reads its skill first, then answers.
    const server = await serve((turn) =>
      turn.toolOutputs.length === 0
        ? { tool: 'exec_command', input: { cmd: 'cat .agents/skills/skillopt-target/SKILL.md' } }
        : { text: '<answer>42</answer>' },
    );
    const codex = {
      backend: 'codex_exec',
      model: 'gpt-5.5',
      base_url: `${server.url}/v1`,
      concurrency: 3,
      options: { path: cliPath('codex') },
    };
    const overrides = [
      'train.num_epochs=1',
      'evaluation.test_env_num=3',
      'cache.mode=off',
      `evaluation.transfer_targets=${JSON.stringify(['sim:sim-2', codex])}`,
    ];
    const out = path.join(tmpDir('skillopt-transfer-'), 'run');
    const loaded = loadConfig(SIM_CONFIG, { overrides, environment: {} });
    const outcome = await runTraining({
      loaded,
      outRoot: out,
      configFile: SIM_CONFIG,
      console: false,
      environment: testEnvironment(),
    });
    assert.equal(outcome.status, 'finished');
    const transfer = TransferSchema.parse(outcome.summary.transfer);
    assert.deepEqual(
      transfer.rows.map((r) => r.target),
      ['sim:sim-2', 'codex_exec:gpt-5.5'],
    );
    const row = transfer.rows[1]!;
    assert.equal(row.initial.n, 3, 'every item scored with the initial skill: no rollout failed');
    assert.equal(row.best.n, 3);

    const initial = fs.readFileSync(path.join(out, 'skills', 'skill_v0000.md'), 'utf8').trim();
    const best = fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8').trim();
    assert.notEqual(best, initial, 'the run learned something');
    // Each skill reached the model only through the agent's read of its skill file: three items each.
    const read = (t: (typeof server.turns)[number], text: string) => t.toolOutputs.some((o) => o.includes(text));
    assert.equal(server.turns.filter((t) => read(t, best)).length, 3);
    assert.equal(server.turns.filter((t) => read(t, initial) && !read(t, best)).length, 3);
    assert.ok(!server.turns.some((t) => t.toolOutputs.length === 0 && t.text.includes(best)));

    const dirs = fs.readdirSync(path.join(out, transfer.dir, 'rollouts'));
    const agentDir = dirs.find((d) => d.startsWith('codex_exec'))!;
    for (const label of ['skill_v0000', 'best_skill']) {
      for (const res of readLines(
        path.join(out, transfer.dir, 'rollouts', agentDir, label, 'repeat_00', 'results.jsonl'),
      )) {
        assert.equal(res.error, undefined, JSON.stringify(res.error));
        assert.deepEqual(res.traces[0].files, ['.agents/skills/skillopt-target/SKILL.md']);
      }
    }
    // The agent's calls are in the transfer's ledger, priced; the run's own ledger has none.
    const calls = readLines(path.join(out, transfer.dir, 'calls.jsonl')).filter(
      (c) => c.model === 'codex_exec:gpt-5.5',
    );
    assert.equal(calls.length, 6);
    assert.ok(
      calls.every((c) => c.cost_usd > 0),
      JSON.stringify(calls[0]),
    );
    assert.ok(!readLines(path.join(out, 'calls.jsonl')).some((c) => c.model === 'codex_exec:gpt-5.5'));
  });
});
