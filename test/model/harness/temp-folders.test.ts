/**
 * The folders an agent target leaves in the temp directory (each rollout's workspace, the CLI's
 * isolated home) are ours and go: when the run exits, and, after a kill -9, when the next run
 * starts. The real `codex` CLI against a fake Responses API server; the run in a temp directory of
 * its own (TMPDIR), so that what it leaves can be seen exactly.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { stringify } from 'yaml';
import { BIN, ROOT, runCliAsync } from '../../helpers/cli.ts';
import { cliPath, missingCli, tempDir, testEnvironment, until } from '../../helpers/agent-cli.ts';
import { fakeAgentServers } from '../../helpers/fake-agent-server.ts';

const serve = fakeAgentServers();

/** Every folder under `tmp`, two levels deep, as `top` or `top/inner`. */
function foldersIn(tmp: string): string[] {
  const out: string[] = [];
  for (const top of fs.readdirSync(tmp)) {
    const dir = path.join(tmp, top);
    if (!fs.statSync(dir).isDirectory()) continue;
    out.push(top);
    for (const inner of fs.readdirSync(dir))
      if (fs.statSync(path.join(dir, inner)).isDirectory()) out.push(`${top}/${inner}`);
  }
  return out.sort();
}

describe('temporary folders of an agent target', { skip: missingCli('codex') }, () => {
  test('killed with kill -9 mid-rollout: its workspace and agent home stay; the next run removes them, and its own when it exits', {
    timeout: 240_000,
  }, async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let hold = true;
    const server = await serve(async () => {
      if (hold) await held;
      return { text: '<answer>unknown</answer>' };
    });
    const dir = tempDir('skillopt-test-agent-run');
    const tmp = tempDir('skillopt-test-tmp');
    const env = { ...testEnvironment(), TMPDIR: tmp };
    const file = path.join(dir, 'config.yaml');
    fs.writeFileSync(
      file,
      stringify({
        model: {
          target: {
            backend: 'codex_exec',
            model: 'gpt-5.5',
            base_url: `${server.url}/v1`,
            concurrency: 1,
            options: { path: cliPath('codex') },
          },
          optimizer: { backend: 'sim', model: 'sim-1' },
          reasoning_effort: '',
        },
        train: { num_epochs: 1, batch_size: 2 },
        evaluation: { eval_test: false },
        env: {
          name: 'sim',
          skill_init: path.join(ROOT, 'configs/sim/seed_skill.md'),
          workers: 1,
          n_train: 2,
          n_val: 1,
          n_test: 1,
        },
        cache: { mode: 'off' },
      }),
    );
    const out = path.join(dir, 'run');
    const child = spawn(process.execPath, [BIN, 'train', '--config', file, '--out', out], {
      cwd: dir,
      env,
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('close', resolve));
    // A rollout is under way: Codex has asked the model.
    await until(() => server.turns.length > 0, 120_000, 'the first model request');
    const during = foldersIn(tmp);
    child.kill('SIGKILL');
    await exited;
    // The orphaned CLI gets its answer and ends; its folders stay.
    hold = false;
    release();
    const leftBehind = during.filter((f) => /skillopt-(agents|codex)/.test(f));
    assert.ok(
      leftBehind.some((f) => /(^|\/)skillopt-codex-(?!home-)/.test(f)),
      `a workspace: ${during.join('\n')}`,
    );
    assert.ok(
      leftBehind.some((f) => /(^|\/)skillopt-codex-home-/.test(f)),
      `an agent home: ${during.join('\n')}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.ok(
      leftBehind.every((f) => fs.existsSync(path.join(tmp, f))),
      'nothing removes them after a kill -9',
    );

    const resumed = await runCliAsync(['train', '--config', file, '--out', out], { cwd: dir, env });
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.deepEqual(
      foldersIn(tmp).filter((f) => /skillopt-(agents|codex)/.test(f)),
      [],
      "the killed run's folders, and the resumed run's own, are gone",
    );
  });
});
