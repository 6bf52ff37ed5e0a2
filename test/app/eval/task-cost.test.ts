/**
 * What a task costs under a skill, in `skillopt eval` and in a training run's summary: tokens per
 * task, USD at the target's prices, agent turns and tool calls, call latency, and a no-skill row
 * (`--skill none`) to compare against; for a run, what the gain cost and when it pays back.
 */
import '../../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runEvaluation } from '../../../src/app/eval/evaluate.ts';
import { loadConfig } from '../../../src/config/load.ts';
import { gainWorth } from '../../../src/engine/gain-cost.ts';
import { quantile, taskCost } from '../../../src/engine/task-cost.ts';
import { runTraining } from '../../../src/app/train.ts';
import type { Trajectory } from '../../../src/envs/types.ts';
import { type FakeProvider, startFakeProvider, textOfUser } from '../../helpers/fake-provider.ts';
import { tmpDir, writeFiles } from '../../helpers/tmp.ts';

const KEYS = { OPENAI_API_KEY: 'sk-test' };

describe('cost per task', () => {
  it('means over the scored rollouts, priced; agent turns and tool calls; unknown price is unknown', () => {
    const t = (input: number, output: number, extra: Partial<Trajectory> = {}): Trajectory => ({
      id: 'x',
      hard: 1,
      soft: 1,
      usage: { input, output, cached: input / 2, reasoning: 0 },
      ...extra,
    });
    const trace = (turns: number, steps: number) => ({
      agent: 'codex',
      steps: Array.from({ length: steps }, () => ({ tool: 'shell', input: 'ls', ok: true })),
      files: [],
      errors: [],
      turns,
      durationMs: 1,
      exitCode: 0,
    });
    const price = { input: 2, cached_input: 0.5, output: 8 };
    const c = taskCost(
      [
        t(1000, 100, { traces: [trace(3, 4)] }),
        t(3000, 300, { traces: [trace(5, 6)] }),
        t(9999, 9, { error: { kind: 'server', message: '503' } }),
        undefined,
      ],
      price,
      [100, 300, 200, 900],
    )!;
    assert.deepEqual([c.tasks, c.input, c.cached, c.output], [2, 2000, 1000, 200]);
    // Per task: 1,000 plain at $2, 1,000 cached at $0.50, 200 out at $8 (per million).
    assert.equal(c.usd, (1000 * 2 + 1000 * 0.5 + 200 * 8) / 1e6);
    assert.deepEqual([c.turns, c.tool_calls, c.call_latency_p50_ms, c.call_latency_p95_ms], [4, 5, 200, 900]);
    assert.equal(taskCost([t(1, 1)], undefined)!.usd, null);
    assert.equal(taskCost([undefined], price), undefined);
    assert.equal(quantile([5, 1, 3], 0.5), 3);
  });

  describe('skillopt eval', () => {
    let fake: FakeProvider;
    before(async () => {
      // Answers right only with the skill; a longer system prompt is more input.
      fake = await startFakeProvider({
        respond: (r) => {
          const system = String(r.body.messages?.find((m: any) => m.role === 'system')?.content ?? '');
          const word = /Echo (w\d+)/.exec(textOfUser(r))?.[1] ?? '';
          return {
            text: `<answer>${system.includes('Echo back') ? word : 'no idea'}</answer>`,
            usage: { input: Math.ceil((system.length + textOfUser(r).length) / 4), output: 7 },
          };
        },
      });
    });
    after(() => fake.close());

    it('a cell per skill with its cost per task, the no-skill row first; the report has the table', async () => {
      const dir = tmpDir();
      const line = (n: number) => JSON.stringify({ id: `i${n}`, input: `Echo w${n}`, answer: `w${n}` });
      writeFiles(dir, {
        'train.jsonl': line(100),
        'val.jsonl': line(101),
        'test.jsonl': Array.from({ length: 6 }, (_, n) => line(n)).join('\n'),
        'skill.md': `Echo back the word after "Echo".\n${'Say only the word, nothing else. '.repeat(20)}`,
        'c.yaml': [
          'model:',
          '  target:',
          '    backend: openai_chat',
          '    model: gpt-4.1-mini',
          `    base_url: ${fake.url}/v1`,
          '    options: {provider: openai}',
          'env: {name: tasks, train_file: train.jsonl, val_file: val.jsonl, test_file: test.jsonl}',
          'cache: {mode: "off"}',
        ].join('\n'),
      });
      const out = path.join(dir, 'eval');
      const summary = await runEvaluation({
        loaded: loadConfig(path.join(dir, 'c.yaml'), { environment: KEYS }),
        outRoot: out,
        configFile: path.join(dir, 'c.yaml'),
        skillFiles: ['none', path.join(dir, 'skill.md')],
        split: 'test',
        environment: KEYS,
        out: null,
      });
      const [none, skill] = summary.cells;
      assert.deepEqual([none!.skill_label, none!.hard, skill!.skill_label, skill!.hard], ['no_skill', 0, 'skill', 1]);
      const a = none!.per_task!;
      const b = skill!.per_task!;
      assert.equal(a.tasks, 6);
      assert.ok(b.input > a.input + 100, 'the skill is paid for as input at every task');
      // gpt-4.1-mini: $0.40 input, $1.60 output per million; no cached input here.
      assert.equal(b.usd, Math.round(((b.input * 0.4 + b.output * 1.6) / 1e6) * 1e8) / 1e8);
      assert.ok(b.call_latency_p50_ms !== undefined && b.call_latency_p95_ms! >= b.call_latency_p50_ms);
      assert.equal(summary.comparisons[0]!.baseline, 'no_skill');
      const md = fs.readFileSync(path.join(out, 'eval_summary.md'), 'utf8');
      assert.match(md, /### Cost per task/);
      assert.match(md, /\| no_skill \| openai_chat:gpt-4\.1-mini \| \d+ \| 0 \| 7 \| 0 \| \$0\.0000\d \|/);
    });
  });

  it('what the gain cost: dollars a point, the saving a task and the tasks it takes to pay back', () => {
    const cost = (usd: number | null, input: number) => ({
      tasks: 10,
      input,
      cached: 0,
      output: 10,
      reasoning: 0,
      usd,
    });
    const saves = gainWorth(
      { initial: cost(0.004, 2000), best: cost(0.003, 1500) },
      { usd: 2, wallTimeS: 600, gain: 0.125 },
    )!;
    assert.deepEqual(saves.report, {
      usd: 2,
      wall_time_s: 600,
      gain_points: 12.5,
      usd_per_point: 0.16,
      saving_per_task_usd: 0.001,
      payback_tasks: 2000,
    });
    assert.match(
      saves.line,
      /\$0\.00400 with the initial skill, \$0\.00300 with the best; training cost \$2\.00 in 600 s, \+12\.5 points on test \(\$0\.16 a point\); the saving pays the training back after 2,000 tasks/,
    );
    const costsMore = gainWorth(
      { initial: cost(0.003, 1500), best: cost(0.004, 2000) },
      { usd: 2, wallTimeS: 60, gain: 0 },
    )!;
    assert.equal(costsMore.report.payback_tasks, undefined);
    assert.equal(costsMore.report.saving_per_task_usd, -0.001);
    const unpriced = gainWorth(
      { initial: cost(null, 1500), best: cost(null, 2000) },
      { usd: null, wallTimeS: 60, gain: 0.1 },
    )!;
    assert.match(unpriced.line, /1500 input tokens with the initial skill, 2000 with the best; training cost unknown/);
    assert.equal(gainWorth({}, { usd: 1, wallTimeS: 1, gain: 0 }), undefined);
  });

  it("a training run's summary has the cost per task of the initial and best skills, and what the gain cost", async () => {
    const config = path.resolve(import.meta.dirname, '../../../configs/sim/default.yaml');
    const out = path.join(tmpDir(), 'run');
    const loaded = loadConfig(config, { environment: {}, overrides: ['train.num_epochs=1'] });
    await runTraining({ loaded, outRoot: out, configFile: config, console: false });
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    assert.ok(
      summary.cost_per_task.initial.input > 0 && summary.cost_per_task.best.input > summary.cost_per_task.initial.input,
      'the trained skill is longer, so a task reads more',
    );
    assert.equal(summary.cost_per_task.best.usd, 0, 'the simulator is free');
    assert.equal(summary.gain_cost.gain_points, Math.round(summary.test_delta_hard * 1e4) / 100);
    const events = fs.readFileSync(path.join(out, 'events.jsonl'), 'utf8');
    assert.match(events, /cost: a test task costs \$0\.00000 with the initial skill/);
  });
});
