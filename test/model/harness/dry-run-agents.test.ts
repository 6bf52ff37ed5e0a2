/**
 * The dry run's estimate for an agent target holds: the real Codex and Claude Code CLIs, against
 * fake servers that report each request's input as the tokens of what the CLI sent, do a
 * three-request task (read the task, read the skill, answer) in `skillopt eval`; the estimate a
 * dry run gives before (from the table) and after (learned from that run's ledger) is within ±30%
 * of what a task spent.
 */
import '../../../src/builtins.ts';
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { stringify } from 'yaml';
import { agentOverhead } from '../../../src/app/agent-overhead.ts';
import { runEvaluation } from '../../../src/app/eval/evaluate.ts';
import { planInputFor } from '../../../src/app/plan-input.ts';
import { planRun } from '../../../src/app/plan.ts';
import { loadConfig } from '../../../src/config/load.ts';
import { cliPath, missingCli, testEnvironment } from '../../helpers/agent-cli.ts';
import { fakeAgentServers, type ScriptReply } from '../../helpers/fake-agent-server.ts';
import { tmpDir, writeFiles } from '../../helpers/tmp.ts';

const serve = fakeAgentServers();

const CLIS = [
  {
    cli: 'codex' as const,
    role: (url: string) => ({
      backend: 'codex_exec',
      model: 'gpt-5.5',
      base_url: `${url}/v1`,
      options: { path: cliPath('codex') },
    }),
    read: (file: string): ScriptReply => ({ tool: 'exec_command', input: { cmd: `cat ${file}` } }),
    skill: '.agents/skills/skillopt-target/SKILL.md',
  },
  {
    cli: 'claude' as const,
    role: (url: string) => ({
      backend: 'claude_code_exec',
      model: 'claude-sonnet-4-5',
      base_url: url,
      api_key_env: 'FAKE_ANTHROPIC_KEY',
      options: { path: cliPath('claude') },
    }),
    read: (file: string): ScriptReply => ({ tool: 'Read', input: { file_path: file } }),
    skill: '.claude/skills/skillopt-target/SKILL.md',
  },
];

describe('the dry run of an agent target', () => {
  for (const c of CLIS) {
    test(`${c.cli}: the table's estimate and the learned one are within ±30% of what a task spent`, {
      skip: missingCli(c.cli),
    }, async (ctx) => {
      const server = await serve(
        (t) =>
          t.toolOutputs.length === 0
            ? c.read('task.md')
            : t.toolOutputs.length === 1
              ? c.read(c.skill)
              : { text: '<answer>w1</answer>' },
        { countUsage: true },
      );
      const dir = tmpDir();
      const line = (n: number) => JSON.stringify({ id: `i${n}`, input: `Echo w${n}`, answer: `w${n}` });
      writeFiles(dir, {
        'train.jsonl': [1, 2, 3, 4].map(line).join('\n'),
        'val.jsonl': [5, 6].map(line).join('\n'),
        'test.jsonl': [7, 8, 9].map(line).join('\n'),
        'skill.md': `Echo back the word after "Echo".\n${'Say only the word. '.repeat(60)}`,
        'c.yaml': stringify({
          model: { target: { ...c.role(server.url), concurrency: 3 }, optimizer: { backend: 'sim', model: 'sim-1' } },
          env: {
            name: 'tasks',
            train_file: 'train.jsonl',
            val_file: 'val.jsonl',
            test_file: 'test.jsonl',
            skill_init: 'skill.md',
          },
          cache: { mode: 'off' },
        }),
      });
      const runs = path.join(dir, 'outputs');
      const environment = { ...testEnvironment(), FAKE_ANTHROPIC_KEY: 'sk-ant-test' };
      const loaded = () => loadConfig(path.join(dir, 'c.yaml'), { environment, cwd: dir });
      const perRollout = async () => {
        const plan = planRun(await planInputFor(loaded(), runs));
        const rollout = plan.stages.find((s) => s.stage === 'rollout')!;
        return { input: rollout.inputTokens / rollout.calls, assumed: plan.assumptions.join('\n') };
      };

      const before = await perRollout();
      assert.match(before.assumed, /the table for \w+_exec/);
      const summary = await runEvaluation({
        loaded: loaded(),
        outRoot: path.join(runs, 'eval'),
        configFile: path.join(dir, 'c.yaml'),
        skillFiles: [path.join(dir, 'skill.md')],
        split: 'test',
        environment,
        out: null,
      });
      const spent = summary.cells[0]!.per_task!.input;
      assert.equal(server.turns.length, 9, 'three requests a task');
      const within = (estimate: number, what: string) =>
        assert.ok(
          Math.abs(estimate - spent) / spent <= 0.3,
          `${what}: ${Math.round(estimate)} estimated, ${spent} spent`,
        );
      ctx.diagnostic(`estimated ${Math.round(before.input)} from the table, spent ${spent}`);
      within(before.input, 'from the table');
      const after = await perRollout();
      assert.match(after.assumed, /the mean of 3 \w+_exec runs recorded under/);
      within(after.input, 'learned from the ledger');
      // Without the CLI's own prompt the estimate would be a small fraction of it.
      assert.ok(agentOverhead('openai_chat', runs, { skill: 1, item: 1 }) === undefined);
    });
  }
});
