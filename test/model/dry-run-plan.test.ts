import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.ts';
import { combinedMergeCalls, formatPlan, mergeCalls, planRun } from '../../src/app/plan.ts';
import { planInputFor } from '../../src/app/plan-input.ts';
import { runTraining } from '../../src/app/train.ts';
import type { CallRecord } from '../../src/model/ledger.ts';
import { readJsonLines } from '../../src/run/atomic.ts';
import { ROOT, runCli, TS_IMPORT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

describe('the dry-run planner', () => {
  it('counts hierarchical merge calls level by level', () => {
    assert.equal(mergeCalls(1, 8), 0);
    assert.equal(mergeCalls(2, 8), 1);
    assert.equal(mergeCalls(8, 8), 1);
    assert.equal(mergeCalls(9, 8), 2); // one group of 8, a lone patch passes through, then 2 -> 1
    assert.equal(mergeCalls(17, 8), 3); // 8+8+1 -> 3 groups -> 1
  });

  it("counts the combined strategy's merge calls: kinds reduced only until both fit one group, then one top merge", () => {
    assert.equal(combinedMergeCalls(1, 0, 4), 0);
    assert.equal(combinedMergeCalls(1, 1, 4), 1);
    assert.equal(combinedMergeCalls(3, 1, 4), 1); // everything fits one group: the step's only merge
    assert.equal(combinedMergeCalls(4, 3, 4), 2); // 4 failures -> 1, then 1 + 3 in the top merge
    assert.equal(combinedMergeCalls(8, 8, 4), 5); // 8 -> 2 and 8 -> 2, then the top merge of 4
    assert.equal(combinedMergeCalls(9, 0, 4), 3); // 4+4+1 -> 3, then the top merge
  });

  it('plans what a real (simulated) run then does: exact where the run is fixed, an upper bound elsewhere', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'c.yaml');
    fs.writeFileSync(
      file,
      stringify({
        _base_: path.join(ROOT, 'configs/sim/default.yaml'),
        train: { num_epochs: 2, batch_size: 10 },
        // The overlap's wrong guesses depend on the decisions: the plan names them and leaves them out.
        evaluation: { gate_overlap: false },
        env: { skill_init: path.join(ROOT, 'configs/sim/seed_skill.md'), n_train: 20, n_val: 10, n_test: 10 },
      }),
    );
    const loaded = loadConfig(file, { environment: {}, cwd: dir });
    const plan = planRun(await planInputFor(loaded));
    assert.ok(!plan.assumptions.some((a) => /gate overlap/.test(a)));
    loaded.config.evaluation.gate_overlap = undefined;
    const overlapped = planRun(await planInputFor(loaded));
    assert.equal(overlapped.total.calls, plan.total.calls);
    assert.ok(
      overlapped.assumptions.some((a) => /each wrong guess of the gate wastes what it ran, at most \d+ calls/.test(a)),
      overlapped.assumptions.join('\n'),
    );
    loaded.config.evaluation.gate_overlap = false;
    await runTraining({ loaded, outRoot: path.join(dir, 'run'), configFile: file, console: false, environment: {} });
    const calls = readJsonLines<CallRecord>(path.join(dir, 'run', 'calls.jsonl'));
    const count = (purpose: string) => calls.filter((c) => c.purpose === purpose).length;
    const planned = (stage: string) => plan.stages.find((s) => s.stage === stage)?.calls ?? 0;
    assert.equal(plan.totalSteps, 4);
    assert.ok(
      count('analyst') <= planned('analyst') && count('analyst') >= planned('analyst') - plan.totalSteps,
      `${count('analyst')} analyst calls, ${planned('analyst')} planned`,
    );
    assert.ok(count('merge') <= planned('merge'), `${count('merge')} merge calls, ${planned('merge')} planned`);
    assert.equal(planned('ranking'), 0, 'with a scheduled learning rate the combined top merge ranks: no ranking call');
    assert.equal(count('ranking'), 0);
    assert.ok(count('slow_update') === planned('slow_update') && count('meta_skill') === planned('meta_skill'));
    const targetCalls = calls.filter((c) => c.role === 'target').length;
    const plannedTarget = plan.stages.filter((s) => s.role === 'target').reduce((n, s) => n + s.calls, 0);
    assert.ok(targetCalls <= plannedTarget, `${targetCalls} target calls, ${plannedTarget} planned at most`);
    assert.ok(targetCalls >= planned('rollout') + planned('baseline'));
    // The audit's probes are planned, at most 8 variants under two skills per step and for the best skill.
    assert.equal(planned('audit_probes'), 2 * 8 * (plan.totalSteps + 1));
    loaded.config.evaluation.audit.checks = ['leak', 'sealed_test'];
    assert.equal(
      planRun(await planInputFor(loaded)).stages.find((s) => s.stage === 'audit_probes'),
      undefined,
      'none without the probes',
    );
  });

  it('skillopt train --dry-run prints calls, tokens and cost from the price table, and calls nothing', () => {
    const dir = tmpDir();
    const r = runCli(
      [
        'train',
        '--config',
        'configs/sim/default.yaml',
        '--dry-run',
        '--set',
        'model.backend=openai_chat',
        '--set',
        'model.target.model=gpt-4o-mini',
        '--set',
        'model.optimizer.model=my-model',
        '--out',
        dir,
      ],
      { env: { OPENAI_API_KEY: '' } },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /nothing is called and nothing is spent/);
    assert.match(r.stdout, /analyst \(at most\)\s+optimizer\s+\d+\s/);
    assert.match(r.stdout, /rollout\s+target\s+180\s/);
    assert.match(r.stdout, /target gpt-4o-mini: \$0\.15 in \/ \$0\.6 out per 1M tokens/);
    assert.match(r.stdout, /optimizer my-model: price unknown/);
    assert.match(r.stdout, /total.*\+ unknown/);
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it('samples each selection item gate_repeats times, and counts every turn of a multi-turn rollout as an upper bound', () => {
    const plan = (overrides: string[], targetCallsPerRollout?: number) =>
      planRun({
        config: loadConfig(path.join(ROOT, 'configs/sim/default.yaml'), { environment: {}, overrides }).config,
        sizes: { train: 40, val: 20, test: 20 },
        itemTokens: 100,
        skillTokens: 500,
        promptTokens: {},
        ...(targetCallsPerRollout ? { targetCallsPerRollout } : {}),
      });
    const stage = (p: ReturnType<typeof planRun>, name: string) => p.stages.find((st) => st.stage === name)!;
    const one = plan([]);
    const three = plan(['evaluation.gate_repeats=3']);
    for (const name of ['baseline', 'selection', 'final_selection'])
      assert.equal(stage(three, name).calls, 3 * stage(one, name).calls, name);
    assert.equal(stage(three, 'rollout').calls, stage(one, 'rollout').calls);
    const turns = plan([], 50);
    assert.equal(stage(turns, 'rollout').calls, 50 * stage(one, 'rollout').calls);
    assert.equal(stage(turns, 'rollout').upperBound, true);
    assert.equal(stage(one, 'rollout').upperBound, undefined);
  });

  it('plans in a time that does not grow with the epochs or the steps: counts scale exactly', () => {
    // In a process of its own, stopped after a minute: a planner whose work grows with the steps
    // (14 billion here) would not stop by itself.
    const script = `
      const { loadConfig } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/config/load.ts')).href)});
      const { planRun } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/app/plan.ts')).href)});
      await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/builtins.ts')).href)});
      const config = loadConfig(${JSON.stringify(path.join(ROOT, 'configs/sim/default.yaml'))}, {
        environment: {},
        overrides: ['train.batch_size=1', 'optimizer.lr_scheduler=constant', 'optimizer.lr_control_mode=autonomous'],
      }).config;
      const plan = (epochs, train) => planRun({
        config: { ...config, train: { ...config.train, num_epochs: epochs } },
        sizes: { train, val: 10, test: 10 }, itemTokens: 100, skillTokens: 500, promptTokens: {},
      });
      process.stdout.write(JSON.stringify([plan(2, 7), plan(2000000, 7000)]));`;
    const r = spawnSync(process.execPath, [...TS_IMPORT, '--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr || `stopped by ${r.signal}`);
    const [small, huge] = JSON.parse(r.stdout) as ReturnType<typeof planRun>[];
    assert.equal(huge!.totalSteps, 2_000_000 * 7_000);
    const calls = (p: ReturnType<typeof planRun>, stage: string) => p.stages.find((s) => s.stage === stage)?.calls ?? 0;
    // Every step stage scales with the steps; the boundary stages with the epochs after the first.
    for (const stage of ['rollout', 'analyst', 'lr_autonomous', 'ranking', 'selection'])
      assert.equal(calls(huge!, stage), (calls(small!, stage) * huge!.totalSteps) / small!.totalSteps, stage);
    for (const stage of ['slow_update', 'meta_skill'])
      assert.equal(calls(huge!, stage), calls(small!, stage) * (2_000_000 - 1), stage);
    assert.equal(calls(huge!, 'baseline'), calls(small!, 'baseline'));
    assert.ok(Number.isFinite(huge!.total.inputTokens));
  });

  it('keeps its table aligned however large the numbers grow (20,000 items a split)', () => {
    const loaded = loadConfig(path.join(ROOT, 'configs/sim/default.yaml'), {
      environment: {},
      overrides: ['model.backend=openai_chat', 'model.target.model=gpt-4o-mini', 'model.optimizer.model=my-model'],
    });
    const plan = planRun({
      config: loaded.config,
      sizes: { train: 20_000, val: 5_000, test: 20_000 },
      itemTokens: 400,
      skillTokens: 2_000,
      promptTokens: {},
    });
    const lines = formatPlan(plan).split('\n');
    const top = lines.findIndex((l) => l.startsWith('stage'));
    const table = lines.slice(top, top + plan.stages.length + 2);
    assert.ok(table.at(-1)!.startsWith('total'));
    assert.ok(
      table.some((l) => /\d{1,3}(,\d{3}){3}/.test(l)),
      'numbers in the billions',
    );
    /** Cells and where each ends: runs of words with single spaces, two or more spaces apart. */
    const cells = (line: string) =>
      [...line.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ text: m[0], end: m.index + m[0].length }));
    const header = cells(table[0]!);
    assert.deepEqual(
      header.map((c) => c.text),
      ['stage', 'role', 'calls', 'input tok', 'output tok', 'cost'],
    );
    for (const line of table.slice(1)) {
      const row = cells(line);
      assert.equal(row.length, line.startsWith('total') ? 5 : 6, `cells apart in: ${line}`);
      // The numbers (calls, tokens, cost) end under their headers.
      assert.deepEqual(
        row.slice(-4).map((c) => c.end),
        header.slice(-4).map((c) => c.end),
        line,
      );
    }
  });
});
