/**
 * The module graph: no import cycle anywhere (type-only imports count), and the layers point
 * one way: the engine never imports the commands, the CLI or the dashboard; models, envs and
 * the optimizer protocol never import the engine; the config imports no backend, env or command;
 * the run directory's modules import no command; the dashboard imports no CLI module.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseCircular, parseDependencyTree, shortenTree, type DependencyTree } from 'dpdm';
import { ROOT } from './helpers/cli.ts';

let graph: Promise<DependencyTree> | undefined;

/** The graph of every module's imports, parsed once for all the tests here (the files do not change). */
function moduleGraph(): Promise<DependencyTree> {
  graph ??= parseGraph();
  return graph;
}

async function parseGraph(): Promise<DependencyTree> {
  const tree = await parseDependencyTree(['src/**/*.ts', 'bin/*.js', 'test/**/*.ts', 'bench/**/*.ts'], {
    context: ROOT,
    cwd: ROOT,
    tsconfig: 'tsconfig.json',
    transform: false,
    skipDynamicImports: false,
  });
  return shortenTree(ROOT, tree);
}

/** The imports of files under `from` that reach files under any of `to`. */
function importsBetween(tree: DependencyTree, from: string, to: string[]): string[] {
  return Object.entries(tree).flatMap(([file, deps]) =>
    file.startsWith(from)
      ? (deps ?? []).filter((d) => d.id && to.some((t) => d.id!.startsWith(t))).map((d) => `${file} -> ${d.id}`)
      : [],
  );
}

describe('the module graph', () => {
  it('has no import cycle', async () => {
    const cycles = parseCircular(await moduleGraph());
    assert.deepEqual(
      cycles.map((c) => c.join(' -> ')),
      [],
    );
  });

  it('fills the registries in one composition root', async () => {
    const tree = await moduleGraph();
    // An import for its side effect only (`import './x.ts';`, or `await import('./x.ts');` when
    // it is loaded on demand) registers something.
    const sideEffects = Object.keys(tree)
      .filter((f) => f.startsWith('src/') && f.endsWith('.ts'))
      .flatMap((f) =>
        [...fs.readFileSync(path.join(ROOT, f), 'utf8').matchAll(/^\s*(?:import |await import\()'([^']+)'\)?;$/gm)].map(
          (m) => `${f}: ${m[1]}`,
        ),
      );
    assert.ok(
      sideEffects.some((s) => s.startsWith('src/builtins.ts: ')),
      'src/builtins.ts registers the built-ins',
    );
    assert.deepEqual(
      sideEffects.filter((s) => !s.startsWith('src/builtins.ts: ')).sort(),
      ['src/cli/main.ts: ../builtins.ts', 'src/index.ts: ./builtins.ts'],
      'only the entry points import it',
    );
  });

  it('keeps what runs ahead of a step in the pipeline, which only the trainer uses', async () => {
    const tree = await moduleGraph();
    const outside = importsBetween(tree, 'src/', ['src/engine/pipeline/']).filter(
      (arrow) => !arrow.startsWith('src/engine/pipeline/'),
    );
    assert.deepEqual(outside, ['src/engine/trainer.ts -> src/engine/pipeline/pipeline.ts']);
    assert.deepEqual(importsBetween(tree, 'src/engine/step/', ['src/engine/pipeline/']), [], 'a step knows no overlap');
  });

  it('points one way between the layers', async () => {
    const tree = await moduleGraph();
    assert.ok(Object.keys(tree).includes('src/engine/step/train-step.ts'), 'the graph holds the sources');
    assert.deepEqual(
      importsBetween(tree, 'src/engine/', ['src/app/', 'src/cli/', 'src/web/', 'src/builtins.ts']),
      [],
      'the engine imports no command',
    );
    assert.deepEqual(
      importsBetween(tree, 'src/model/', ['src/engine/', 'src/app/', 'src/envs/']),
      [],
      'models import no engine, command or env',
    );
    assert.deepEqual(
      importsBetween(tree, 'src/envs/', ['src/engine/', 'src/app/']),
      [],
      'envs know nothing of the trainer',
    );
    assert.deepEqual(
      importsBetween(tree, 'src/protocol/', ['src/engine/', 'src/model/', 'src/app/']),
      [],
      'the optimizer protocol stands below the engine and the sim',
    );
    assert.deepEqual(
      importsBetween(tree, 'src/audit/', ['src/engine/', 'src/app/', 'src/cli/', 'src/web/', 'src/sleep/']),
      [],
      'the audit stands below the trainer, Sleep and the commands that run it',
    );
    assert.deepEqual(
      importsBetween(tree, 'src/web/', ['src/engine/']),
      [],
      "the dashboard reads run files and starts commands, never the engine's internals",
    );
    assert.deepEqual(
      importsBetween(tree, 'src/mcp/', ['src/cli/']),
      [],
      'the MCP server runs the commands as processes, it imports none',
    );
    assert.deepEqual(
      importsBetween(tree, 'src/queue/', ['src/app/', 'src/cli/']),
      [],
      'the workers stand below the use cases and the commands that start them',
    );
    assert.deepEqual(
      importsBetween(tree, 'src/web/', ['src/cli/']),
      [],
      'the dashboard takes what it shares with the commands from the layers below them',
    );
    assert.deepEqual(
      importsBetween(tree, 'src/config/', [
        'src/model/',
        'src/envs/',
        'src/engine/',
        'src/run/',
        'src/app/',
        'src/cli/',
        'src/web/',
        'src/builtins.ts',
      ]),
      [],
      "the config checks names against its own catalog, never the backends' or the envs' registries",
    );
    assert.deepEqual(
      importsBetween(tree, 'src/run/', ['src/engine/', 'src/app/', 'src/cli/', 'src/web/']),
      [],
      'the run directory knows nothing of the commands that write it',
    );
    assert.ok(
      !Object.keys(tree).some((f) => f.startsWith('src/eval/')),
      'evaluation is a use case of src/app/, not a layer of its own',
    );
  });

  it('keeps every source file under 400 lines, the scripts and styles of the dashboard included', () => {
    const long = (fs.readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[])
      .filter((f) => /\.(ts|js|css|html)$/.test(f))
      .map((f) => path.join('src', f))
      .filter((f) => fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n').length > 400);
    assert.deepEqual(long, []);
  });
});
