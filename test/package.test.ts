/**
 * The package as users get it: `npm pack`, unpacked in a clean directory, run with plain node.
 * Offline, so its dependencies are the project's own (linked by name: only those package.json
 * declares, so an undeclared import fails here as it would for a user); npm itself would fetch
 * them. The packed files are the build (no TypeScript sources), and the files that are not code
 * are found at run time: prompts and configs (the demo trains), the dashboard's page and its diff
 * worker, a custom scorer written in TypeScript, and the library's type declarations.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildIsCurrent } from '../bin/entry.js';
import { ROOT } from './helpers/cli.ts';
import { startFakeProvider, textOfUser, type FakeProvider } from './helpers/fake-provider.ts';
import { tmpDir, writeFiles } from './helpers/tmp.ts';
import { startUiProcess } from './web/helpers.ts';

const run = (cmd: string, args: string[], cwd: string) => {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};

/** Every file under `dir`, relative to it. */
const filesUnder = (dir: string): string[] =>
  fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));

describe('the packed package', () => {
  let app: string;
  let pkg: string;
  let bin: string;
  let packed: string[];
  const skillopt = (args: string[], cwd = app) =>
    spawnSync(process.execPath, [bin, ...args], {
      cwd,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, SKILLOPT_DEBUG: '1' },
    });

  before(() => {
    // What `npm pack` runs first (prepare), unless the build is current.
    if (!buildIsCurrent(ROOT)) run(process.execPath, [path.join(ROOT, 'scripts/build.js')], ROOT);
    const dir = tmpDir('skillopt-pack-');
    const [info] = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], ROOT)) as {
      filename: string;
      files: { path: string }[];
    }[];
    packed = info!.files.map((f) => f.path);
    app = path.join(dir, 'app');
    fs.mkdirSync(path.join(app, 'node_modules'), { recursive: true });
    run('tar', ['-xzf', path.join(dir, info!.filename), '-C', path.join(app, 'node_modules')], dir);
    pkg = path.join(app, 'node_modules', 'skillopt');
    fs.renameSync(path.join(app, 'node_modules', 'package'), pkg);
    const manifest = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      bin: { skillopt: string };
    };
    for (const name of Object.keys(manifest.dependencies)) {
      fs.mkdirSync(path.dirname(path.join(app, 'node_modules', name)), { recursive: true });
      fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(app, 'node_modules', name));
    }
    bin = path.join(pkg, manifest.bin.skillopt);
  });

  it('holds the build and its assets, not the sources', () => {
    assert.ok(
      !packed.some((f) => /^(src|test|bench|scripts)\//.test(f)),
      'no sources, tests, benchmarks or build scripts',
    );
    assert.ok(!packed.some((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), 'no TypeScript but declarations');
    for (const f of [
      'bin/skillopt.js',
      'bin/entry.js',
      'dist/bundle/main.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/.build-stamp',
      'configs/sim/default.yaml',
      'configs/sim/seed_skill.md',
      'plugins/codex/skills/skillopt-sleep/SKILL.md',
      'README.md',
    ]) {
      assert.ok(packed.includes(f), f);
    }
    const assets = filesUnder(path.join(ROOT, 'src')).filter((f) => !f.endsWith('.ts'));
    assert.ok(
      assets.some((f) => f.endsWith('.py')) &&
        assets.includes('web/files/diff-worker.js') &&
        assets.includes('web/static/index.html'),
    );
    for (const f of assets) assert.ok(packed.includes(`dist/${f}`), `dist/${f}`);
    for (const f of filesUnder(path.join(ROOT, 'prompts'))) assert.ok(packed.includes(`prompts/${f}`), `prompts/${f}`);
  });

  it('prints its help and trains the demo with plain node, from its own configs and prompts', () => {
    const help = skillopt(['--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /train \[options\]/);
    const out = path.join(app, 'outputs', 'demo');
    const r = skillopt([
      'train',
      '--config',
      path.join(pkg, 'configs/sim/default.yaml'),
      '--out',
      out,
      '--set',
      'train.num_epochs=1',
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /best on selection/);
    assert.ok(fs.readFileSync(path.join(out, 'best_skill.md'), 'utf8').length > 0);
  });

  it("serves the dashboard's page and diffs skills in its worker", async () => {
    const ui = await startUiProcess(['--runs', path.join(app, 'outputs')], { bin, cwd: app });
    try {
      const page = await fetch(ui.url);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<html/i);
      assert.equal((await fetch(`${ui.url}vendor/uplot.js`)).status, 200);
      const { runs } = (await (await fetch(`${ui.url}api/runs`)).json()) as { runs: { id: string }[] };
      const id = runs.find((r) => r.id.endsWith('/demo'))!.id;
      const diff = (await (await fetch(`${ui.url}api/diff?run=${encodeURIComponent(id)}&a=v:0&b=best`)).json()) as {
        added: number;
        lines: { t: string }[];
      };
      assert.ok(diff.added > 0 && diff.lines.some((l) => l.t === '@'), JSON.stringify(diff));
    } finally {
      assert.equal(await ui.stop(), 0);
    }
  });

  describe('with a target model on a fake server', () => {
    let fake: FakeProvider;
    before(async () => {
      fake = await startFakeProvider({
        respond: (r) => ({ text: `<answer>${/yes/.test(textOfUser(r)) ? 'yes' : 'maybe'}</answer>` }),
      });
    });
    after(() => fake.close());

    it('evaluates with a custom scorer written in TypeScript', async () => {
      const dir = path.join(app, 'tasks');
      const items = (ids: string[]) =>
        ids
          .map((id) =>
            JSON.stringify({
              id,
              question: `say ${id.startsWith('y') ? 'yes' : 'no'}`,
              answer: id.startsWith('y') ? 'yes' : 'no',
            }),
          )
          .join('\n');
      writeFiles(dir, {
        'train.jsonl': items(['y1', 'n1']),
        'val.jsonl': items(['y2', 'n2']),
        'test.jsonl': items(['y3', 'y4', 'n3', 'n4']),
        'skill.md': '# Answer yes or no.\n',
        // Type annotations: plain node cannot load this file.
        'scorer.ts':
          'export default (prediction: string, item: { expected: unknown }): { hard: number } => ({ hard: prediction.trim() === String(item.expected) ? 1 : 0 });\n',
        'config.yaml': [
          `_base_: ${path.join(pkg, 'configs/_base_/default.yaml')}`,
          'model:',
          `  target: { backend: openai_compatible, model: fake-1, base_url: '${fake.url}/v1' }`,
          '  optimizer: { backend: sim, model: sim-1 }',
          "  reasoning_effort: ''",
          'cache: { mode: off }',
          'env:',
          '  name: tasks',
          '  skill_init: skill.md',
          '  train_file: train.jsonl',
          '  val_file: val.jsonl',
          '  test_file: test.jsonl',
          '  fields: { input: question, answer: answer }',
          '  scorer: { type: custom, module: scorer.ts }',
          '',
        ].join('\n'),
      });
      // Not spawnSync: the fake server answers from this process.
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [bin, 'eval', '--config', 'config.yaml', '--skill', 'skill.md', '--out', 'eval'],
          { cwd: dir },
          (_err, _out, stderr) => resolve({ code: child.exitCode, stderr }),
        );
      });
      assert.equal(r.code, 0, r.stderr);
      const summary = JSON.parse(fs.readFileSync(path.join(dir, 'eval', 'eval_summary.json'), 'utf8')) as {
        n_items: number;
        hard: number;
      };
      assert.deepEqual([summary.n_items, summary.hard], [4, 0.5], 'the two "yes" items pass, the two "no" items fail');
    });
  });

  it('trains and evaluates through the library API, imported by its name, with an event callback', () => {
    const config = path.join(pkg, 'configs/sim/default.yaml');
    const out = path.join(app, 'outputs', 'api');
    writeFiles(app, {
      'use-api.mjs': [
        "import { train, evaluate } from 'skillopt';",
        'const types = [];',
        `const run = await train({ config: ${JSON.stringify(config)}, out: ${JSON.stringify(out)}, overrides: ['train.num_epochs=1'], onEvent: (e) => types.push(e.type) });`,
        `const summary = await evaluate({ config: ${JSON.stringify(config)}, skills: [${JSON.stringify(path.join(pkg, 'configs/sim/seed_skill.md'))}, ${JSON.stringify(path.join(out, 'best_skill.md'))}], out: ${JSON.stringify(`${out}-eval`)} });`,
        "console.log(JSON.stringify({ status: run.status, decisions: types.filter((t) => t === 'gate_decision').length, finished: types.at(-1), gain: summary.comparisons[0].hard.diff }));",
        '',
      ].join('\n'),
    });
    const r = JSON.parse(run(process.execPath, ['use-api.mjs'], app)) as {
      status: string;
      decisions: number;
      finished: string;
      gain: number;
    };
    assert.deepEqual([r.status, r.decisions, r.finished], ['finished', 3, 'run_finished']);
    assert.ok(r.gain > 0, `the trained skill scores above the seed on test (${r.gain})`);
  });

  it("gives a TypeScript project the library's types", () => {
    writeFiles(app, {
      'package.json': JSON.stringify({ type: 'module' }),
      'tsconfig.json': JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['use.ts'],
      }),
      // The error expected on the last line is there only if the types are the real ones (not any).
      'use.ts': [
        "import { loadConfig, type ChatModel } from 'skillopt';",
        "export const size: number = loadConfig('c.yaml').config.train.batch_size;",
        "export const answer = (m: ChatModel) => m.complete({ purpose: 'rollout', messages: [] });",
        '// @ts-expect-error: a number is not a string',
        "export const wrong: string = loadConfig('c.yaml').config.train.batch_size;",
        '',
      ].join('\n'),
    });
    run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], app);
  });

  it("checks with skipLibCheck off, in a project without @types/node: the library's declarations need no NodeJS types", () => {
    const dir = path.join(app, 'strict');
    writeFiles(dir, {
      'package.json': JSON.stringify({ type: 'module' }),
      'tsconfig.json': JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: [],
        },
        files: ['use.ts'],
      }),
      'use.ts': [
        "import { evaluate, loadConfig, train, type EvaluateOptions, type LoadedConfig } from 'skillopt';",
        "export const loaded: LoadedConfig = loadConfig('c.yaml');",
        "export const options: EvaluateOptions = { config: 'c.yaml', skills: ['a.md'], out: 'o' };",
        'export const both = [train, evaluate];',
        '',
      ].join('\n'),
    });
    fs.symlinkSync(path.join(app, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
    });
    // Errors in the dependencies' own declarations are theirs; ours must have none.
    const ours = r.stdout.split('\n').filter((l) => l.includes('node_modules/skillopt/'));
    assert.deepEqual(ours, [], r.stdout);
  });
});
