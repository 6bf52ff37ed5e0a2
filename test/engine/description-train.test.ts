/**
 * Training the description on a trigger eval set in skill-creator's format, on the simulator:
 * the steps edit the front matter's description alone, every description stays within the Agent
 * Skills limits, the step records carry precision, recall and F1, and the trained description
 * raises the held-out F1 measured by `skillopt eval`.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runEvaluation } from '../../src/app/eval/evaluate.ts';
import { runTraining } from '../../src/app/train.ts';
import { loadConfig } from '../../src/config/load.ts';
import type { HistoryRecord } from '../../src/run/records.ts';
import { frontMatterProblems, skillListing } from '../../src/skill/agent-skill.ts';
import { trainSettings } from '../../src/engine/settings.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

const CONFIG = path.join(ROOT, 'configs/sim/triggers.yaml');
const SEED = path.join(ROOT, 'configs/sim/triggers-skill/SKILL.md');

async function train(overrides: string[] = []) {
  const out = path.join(tmpDir('skillopt-triggers-'), 'run');
  const loaded = loadConfig(CONFIG, { overrides, environment: {} });
  const outcome = await runTraining({ loaded, outRoot: out, configFile: CONFIG, console: false });
  assert.equal(outcome.status, 'finished');
  const history = JSON.parse(fs.readFileSync(path.join(out, 'history.json'), 'utf8')) as HistoryRecord[];
  return { out, history };
}

const bodyOf = (skill: string) =>
  skill.slice(skill.indexOf('\n---\n') + 5).replace(/<!-- SLOW_UPDATE_START -->[\s\S]*<!-- SLOW_UPDATE_END -->\n?/, '');

describe('training the description (triggers env, simulator)', () => {
  it('raises the held-out F1; only the description changes, within the limits', async () => {
    const { out, history } = await train();
    const seed = fs.readFileSync(SEED, 'utf8');
    const best = fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8');
    assert.ok(history.length > 0 && history.every((r) => r.step_target === 'description'));
    const changed = history.filter((r) => r.description_change);
    assert.ok(changed.length > 0, 'a step proposed a description');
    for (const r of changed) {
      assert.equal(r.description_change!.before === r.description_change!.after, false);
      assert.ok([...r.description_change!.after].length <= 1024 && !/[<>]/.test(r.description_change!.after));
    }
    assert.ok(
      history[0]!.activation_train && history[0]!.activation_val,
      'precision, recall and F1 on train and gate queries',
    );
    assert.equal(history[0]!.activation_val!.n, 4 * 3, 'four gate queries, three samples each');
    const flipped = history[0]!.activation_val!.flipped!;
    assert.ok(flipped.fixed.length > 0, 'the accepted description fixed gate queries the seed missed');
    assert.ok(flipped.fixed.every((id) => !history[0]!.activation_val!.failing.includes(id)));
    assert.deepEqual(frontMatterProblems(best), []);
    assert.notEqual(skillListing(best).description, skillListing(seed).description);
    assert.equal(bodyOf(best).trim(), bodyOf(seed).trim(), 'the body is not edited in description steps');

    const summary = await runEvaluation({
      loaded: loadConfig(CONFIG, { environment: {} }),
      outRoot: path.join(out, '..', 'eval'),
      configFile: CONFIG,
      skillFiles: [SEED, path.join(out, 'best_skill.md')],
      split: 'test',
      repeats: 3,
      out: null,
      // The run sealed one test figure of each; three samples of each are a measurement of their own.
      rescoreTest: true,
    });
    const [before, after] = summary.cells.map((c) => c.activation!);
    assert.ok(after!.f1 > before!.f1, `held-out F1 ${before!.f1} -> ${after!.f1}`);
  });

  it('train.targets [body, description] takes turns; a rewrite mode cannot train the description', async () => {
    const { history } = await train(['train.targets=[body,description]', 'train.num_epochs=1', 'train.batch_size=6']);
    assert.deepEqual(
      history.map((r) => r.step_target ?? 'body'),
      ['body', 'description'],
    );
    const refused = path.join(tmpDir('skillopt-triggers-'), 'run');
    await assert.rejects(
      runTraining({
        loaded: loadConfig(CONFIG, { overrides: ['optimizer.skill_update_mode=rewrite'], environment: {} }),
        outRoot: refused,
        configFile: CONFIG,
        console: false,
      }),
      /needs optimizer\.skill_update_mode: patch/,
    );
    assert.equal(fs.existsSync(refused), false, 'nothing written');
  });

  it("trains a skill's when_to_use for a target that lists it; the description stays, and Codex is never offered it", async () => {
    const dir = path.join(tmpDir('skillopt-when-'), 'workbook-charts');
    fs.mkdirSync(dir, { recursive: true });
    const seed = fs
      .readFileSync(SEED, 'utf8')
      .replace(
        'description: Helps with data.\n',
        'description: Helps with data.\nwhen_to_use: Use for spreadsheets.\n',
      );
    fs.writeFileSync(path.join(dir, 'SKILL.md'), seed);
    const { out, history } = await train([`env.skill_init=${dir}`, 'train.num_epochs=1']);
    const best = fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8');
    assert.equal(skillListing(best).description, 'Helps with data.', 'the description is kept');
    assert.notEqual(skillListing(best).whenToUse, 'Use for spreadsheets.', 'the when_to_use was trained');
    assert.deepEqual(frontMatterProblems(best), []);
    const change = history.find((r) => r.description_change)!.description_change!;
    assert.match(change.before, /^Helps with data\. - Use for spreadsheets\.$/, 'the listing as the target saw it');
    assert.ok(history.some((r) => (r.activation_val?.flipped?.fixed.length ?? 0) > 0));

    const settings = (backend: string) =>
      trainSettings(loadConfig(CONFIG, { overrides: [`model.target.backend=${backend}`], environment: {} }).config);
    assert.equal(settings('sim').whenToUse, true);
    assert.equal(settings('claude_code_exec').whenToUse, true);
    assert.equal(
      settings('codex_exec').whenToUse,
      false,
      'Codex lists no when_to_use: only the description is trained',
    );
  });
});
