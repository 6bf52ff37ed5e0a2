/**
 * Training a skill package on the simulator: every file rides along from the first rollout to
 * `best_skill/`, byte for byte with its mode; each version is stored and read back whole; a
 * candidate whose edits break a script is rejected before it is scored.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runTraining } from '../../src/app/train.ts';
import { loadConfig } from '../../src/config/load.ts';
import { getBackend, registerBackend } from '../../src/model/registry.ts';
import type { ChatModel, ChatRequest } from '../../src/model/types.ts';
import { RunDir } from '../../src/run/layout.ts';
import type { HistoryRecord } from '../../src/run/records.ts';
import { readSkillFile } from '../../src/run/skill-files.ts';
import { rebuildRuntimeState } from '../../src/run/state-rebuild.ts';
import { readPackageDir } from '../../src/skill/package/folder.ts';
import { fileBytes, fileSha256, packageHash, type SkillPackage } from '../../src/skill/package/package.ts';
import { ROOT } from '../helpers/cli.ts';
import { SIM_CONFIG } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

const FIXTURE = path.join(ROOT, 'test/fixtures/packages/pdf-forms');
const BROKEN_SCRIPT = 'scripts/check_fields.py';

/** The simulator's optimizer, whose failure analysts also rewrite a script into one that no longer parses. */
registerBackend({
  name: 'sim-that-breaks-scripts',
  aliases: [],
  defaultModel: 'sim-1',
  async create(role, ctx): Promise<ChatModel> {
    const sim = await getBackend('sim')!.create(role, ctx);
    return {
      id: `sim-that-breaks-scripts:${role.model || 'sim-1'}`,
      async complete(req: ChatRequest) {
        const res = await sim.complete(req);
        const meta = req.meta as { kind?: string; source?: string; files?: unknown[] } | undefined;
        if (meta?.kind !== 'analyst' || meta.source !== 'failure' || !meta.files) return res;
        const reply = JSON.parse(res.text) as { patch?: { edits: unknown[] } };
        reply.patch ??= { edits: [] };
        reply.patch.edits.unshift({ op: 'append', file: BROKEN_SCRIPT, content: 'def broken(:\n' });
        const { parsed: _parsed, ...rest } = res;
        return { ...rest, text: JSON.stringify(reply) };
      },
    };
  },
});

async function train(skill: string, overrides: string[] = [], config = SIM_CONFIG) {
  const out = path.join(tmpDir('skillopt-package-'), 'run');
  const loaded = loadConfig(config, {
    overrides: [...(skill ? [`env.skill_init=${skill}`, 'train.num_epochs=1'] : []), ...overrides],
    environment: {},
  });
  const outcome = await runTraining({ loaded, outRoot: out, configFile: config, console: false });
  const history = JSON.parse(fs.readFileSync(path.join(out, 'history.json'), 'utf8')) as HistoryRecord[];
  return { out, outcome, history };
}

/** Every file of a folder with its bytes and mode. */
function tree(dir: string): Record<string, { bytes: string; mode: number }> {
  const out: Record<string, { bytes: string; mode: number }> = {};
  for (const rel of (fs.readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const file = path.join(dir, rel);
    const stat = fs.statSync(file);
    if (stat.isFile()) out[rel] = { bytes: fs.readFileSync(file).toString('base64'), mode: stat.mode & 0o777 };
  }
  return out;
}

function copyFixture(): string {
  const dir = path.join(tmpDir('skillopt-package-src-'), 'pdf-forms');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

describe('training a skill package', () => {
  it('carries every file to best_skill/, byte for byte with its mode, and stores each version whole', async () => {
    const source = copyFixture();
    const initial = readPackageDir(source);
    const { out, outcome, history } = await train(source);
    assert.equal(outcome.status, 'finished');
    assert.ok(history.length > 0);
    // Every step's package was checked before its gate.
    assert.ok(history.every((h) => h.action.startsWith('skip_no') || (h.package_checks?.checks ?? 0) > 0));

    const dir = new RunDir(out);
    const best = readSkillFile(dir, dir.bestSkill)!;
    const runtime = JSON.parse(fs.readFileSync(dir.runtimeState, 'utf8')) as { best_skill_hash: string };
    assert.equal(packageHash(best), runtime.best_skill_hash);
    // best_skill/ is the best package as a folder an agent or deploy can take.
    const folder = tree(path.join(out, 'best_skill'));
    assert.equal(Buffer.from(folder['SKILL.md']!.bytes, 'base64').toString('utf8'), best.skill);
    for (const [rel, file] of best.files ?? [])
      assert.deepEqual(folder[rel], { bytes: Buffer.from(fileBytes(file)).toString('base64'), mode: file.mode }, rel);
    // The files no edit touched are the source's, bytes and modes: scripts stay executable, fonts and PDFs intact.
    const sourceTree = tree(source);
    const unchanged = [...(initial.files ?? [])].filter(
      ([rel, file]) => best.files?.get(rel) && fileSha256(best.files.get(rel)!) === fileSha256(file),
    );
    assert.ok(unchanged.length > 5, `${unchanged.length} files unchanged`);
    for (const [rel] of unchanged) assert.deepEqual(folder[rel], sourceTree[rel], rel);
    assert.ok(
      Object.values(sourceTree).some((f) => f.mode === 0o755),
      'the fixture has an executable script',
    );
    // A lost runtime_state.json is rebuilt with the package's identity, not its SKILL.md's alone.
    fs.rmSync(dir.runtimeState);
    assert.equal(rebuildRuntimeState(dir, 'is missing').best_skill_hash, packageHash(best));
    // The initial version reads back as the source package.
    assert.equal(packageHash(readSkillFile(dir, dir.skill(0))!), packageHash(initial));
  });

  it('rejects a candidate whose edits break a script before any of its rollouts', async () => {
    const source = copyFixture();
    const { out, history } = await train(source, ['model.optimizer.backend=sim-that-breaks-scripts']);
    const broken = history.filter((h) => h.action === 'skip_invalid_package');
    assert.ok(broken.length > 0, `no step was rejected for a broken package: ${history.map((h) => h.action)}`);
    for (const h of broken) {
      assert.ok(
        h.package_checks?.broken.some((c) => c.check === 'python' && c.file === BROKEN_SCRIPT),
        JSON.stringify(h.package_checks),
      );
      assert.match(h.skip_reason ?? '', new RegExp(BROKEN_SCRIPT.replace('.', '\\.')));
      // Never scored: no selection rollouts for that step.
      assert.equal(
        fs.existsSync(path.join(out, 'steps', `step_${String(h.step).padStart(4, '0')}`, 'selection_eval')),
        false,
      );
    }
    // The broken script never reaches the best package.
    const best = readSkillFile(new RunDir(out), path.join(out, 'best_skill.md')) as SkillPackage;
    const script = best.files?.get(BROKEN_SCRIPT);
    assert.ok(script && script.kind === 'text' && !script.text.includes('def broken(:'));
  });

  it('the package demo moves rules into references and its test score rises', async () => {
    const config = path.join(ROOT, 'configs/sim/package.yaml');
    const initial = readPackageDir(path.join(ROOT, 'configs/sim/package-skill'));
    const { out, outcome, history } = await train('', [], config);
    assert.equal(outcome.status, 'finished');
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8')) as Record<string, number>;
    assert.ok(summary.baseline_test_hard! < 0.3, `baseline ${summary.baseline_test_hard}`);
    assert.ok(summary.test_hard! > summary.baseline_test_hard! + 0.3, `best ${summary.test_hard}`);
    assert.ok(history.some((h) => h.action === 'accept_new_best'));
    assert.ok(
      history.some((h) => h.action === 'reject'),
      'the gate had something to reject',
    );
    const best = readSkillFile(new RunDir(out), path.join(out, 'best_skill.md'))!;
    const created = [...(best.files?.keys() ?? [])].filter((p) => !initial.files?.has(p));
    assert.ok(
      created.some((p) => p.startsWith('references/')),
      `new references: ${created}`,
    );
    // The always-loaded document got shorter: what it held moved where it is read only when needed.
    assert.ok(best.skill.length < initial.skill.length, `${best.skill.length} vs ${initial.skill.length} characters`);
    for (const rel of created)
      assert.match(best.skill, new RegExp(rel.replace(/[./]/g, '\\$&')), `SKILL.md points to ${rel}`);
    // Each step records which reference files its rollouts opened, counted once per rollout.
    const used = history.filter((h) =>
      Object.keys(h.package_usage?.files ?? {}).some((p) => p.startsWith('references/')),
    );
    assert.ok(used.length > 0, 'some step read a reference');
    for (const h of history) {
      assert.equal(h.package_usage?.rollouts, (h.rollout_n ?? 0) - (h.rollout_errors ?? 0), `step ${h.step}`);
      for (const [rel, use] of Object.entries(h.package_usage?.files ?? {}))
        assert.ok(use.read >= 1 && use.read <= h.package_usage!.rollouts, `${rel}: ${JSON.stringify(use)}`);
    }
  });
});
