import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { auditItems } from '../../src/audit/items.ts';
import { SimEnv, SimEnvOptions } from '../../src/envs/sim/env.ts';
import { runCli } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { SIM_CONFIG, trainSim } from '../helpers/train.ts';

describe('skillopt audit', () => {
  it("passes a run's honest best skill and shows its sealed test figure; fails a skill that carries a test item, naming it", async () => {
    const seals = tmpDir('skillopt-seals-');
    const env = { XDG_CACHE_HOME: path.dirname(seals) };
    const run = await trainSim(['train.num_epochs=1', `evaluation.audit.seal_dir=${seals}`]);
    const set = ['--set', `evaluation.audit.seal_dir=${seals}`];
    const ok = runCli(['audit', run.out, ...set], { env });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /best skill against the initial one: pass/);
    assert.match(ok.stdout, /leak: pass \(no item of the data\)/);
    // The gain checks need the run's rollouts: they are read from the run, as measured when it ended.
    assert.match(
      ok.stdout,
      /second_scorer: pass \(the gain holds under a second scorer: .* \(measured when the run ended\)\)/,
    );
    assert.match(ok.stdout, /probes: pass \(.*\(measured when the run ended\)\)/);
    assert.match(
      ok.stdout,
      new RegExp(`sealed_test: hard ${run.summary.test_hard} on the test split, sealed by ${run.out}`),
    );

    const items = auditItems(await new SimEnv(SimEnvOptions.parse({})).load());
    const item = items.find((i) => i.split === 'test' && /^\d{4}-\d{2}-\d{2}$/.test(i.answers[0]!))!;
    const dir = tmpDir();
    const skill = path.join(dir, 'SKILL.md');
    fs.writeFileSync(skill, `# Sites\n\n- Write dates as YYYY-MM-DD.\n- ${item.input} ${item.answers[0]}\n`);
    const bad = runCli(['audit', skill, '-c', SIM_CONFIG, ...set], { env });
    assert.equal(bad.status, 1, bad.stderr);
    assert.match(bad.stdout, /: fail\n/);
    assert.match(bad.stdout, new RegExp(`answer of test item ${item.id} at SKILL\\.md:4`));
    assert.match(bad.stdout, /no test figure sealed for this skill/);

    const json = runCli(['audit', skill, '-c', SIM_CONFIG, '--json', ...set], { env });
    const report = JSON.parse(json.stdout) as { verdict: string; checks: { findings: { item: string }[] }[] };
    assert.equal(report.verdict, 'fail');
    assert.ok(report.checks[0]!.findings.some((f) => f.item === item.id));

    const none = runCli(['audit', skill], { env });
    assert.equal(none.status, 2);
    assert.match(none.stderr, /name the config whose data to audit against with --config/);
  });

  it('deploy --audit deploys an honest best skill and refuses one that carries items of the data, writing nothing', async () => {
    const project = tmpDir();
    const honest = await trainSim(['train.num_epochs=1']);
    const ok = runCli(['deploy', honest.out, '--to', 'claude', '--project', project, '--name', 'sites', '--audit']);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /audit of the best skill: pass/);
    assert.ok(fs.existsSync(path.join(project, '.claude/skills/sites/SKILL.md')));

    // The leaks kept, with a warning, by a run that only warns.
    const leaky = await trainSim([
      'model.optimizer.options.leak=1',
      'train.num_epochs=1',
      'evaluation.audit.on_fail=warn',
    ]);
    const best = fs.readFileSync(path.join(leaky.out, 'best_skill.md'), 'utf8');
    assert.match(best, /For "[^"]+" the answer is /, 'the run kept a leak');
    const other = tmpDir();
    const refused = runCli(['deploy', leaky.out, '--to', 'claude', '--project', other, '--name', 'sites', '--audit']);
    assert.equal(refused.status, 1, refused.stdout);
    assert.match(refused.stdout, /audit of the best skill: fail/);
    assert.match(refused.stderr, /the audit rejects this skill: nothing deployed/);
    assert.equal(fs.existsSync(path.join(other, '.claude')), false);
  });
});
