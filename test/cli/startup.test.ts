/**
 * What the command loads: `--help` only the command line, and a run only what it uses (a run on
 * the simulator no provider SDK and no SQLite). The time this saves is measured by
 * `bench/startup.ts`; here, which modules a real process loads.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { BIN, ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** Notes on stderr every module the process resolves (a loader hook, registered before the program starts). */
const HOOK = `data:text/javascript,${encodeURIComponent(
  "import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent('export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(\"LOADED \" + r.url + \"\\\\n\"); return r; }'));",
)}`;

/** What the build's bundle holds: per file of dist/bundle/, the modules bundled into it. */
const bundled = (): Record<string, string[]> =>
  JSON.parse(fs.readFileSync(path.join(ROOT, 'dist/bundle/inputs.json'), 'utf8')) as Record<string, string[]>;

/** The modules a loaded URL stands for: a file of the bundle, those bundled into it. */
function modulesOf(url: string): string[] {
  const file = /\/dist\/bundle\/([^/]+)$/.exec(url)?.[1];
  if (!file) return [url];
  const inputs = bundled()[file];
  assert.ok(inputs, `${file} is not listed in dist/bundle/inputs.json`);
  return inputs.map((i) => `file://${path.join(ROOT, i)}`);
}

/** The modules of the package (path under src/ or dist/, without extension) and the packages a run of `skillopt args` loads. */
function loaded(args: string[]): { own: string[]; packages: Set<string> } {
  const r = spawnSync(process.execPath, ['--import', HOOK, BIN, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const urls = [...r.stderr.matchAll(/^LOADED (\S+)$/gm)].flatMap((m) => modulesOf(m[1]!));
  const own = urls
    .flatMap((u) => /\/(?:src|dist)\/(.+)\.[jt]s$/.exec(u)?.[1] ?? [])
    .filter((u) => !u.includes('node_modules'));
  const packages = new Set(urls.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? []));
  return { own, packages };
}

describe('start-up', () => {
  it('--help loads the command line only: no env, backend, engine or config schema', () => {
    const { own, packages } = loaded(['--help']);
    assert.ok(own.includes('cli/main'), own.join(', '));
    assert.deepEqual(
      own.filter((m) =>
        /^(builtins|envs|engine|app|eval|web|sleep)\b|^model\/(?!types$)|^config\/(schema|load)$/.test(m),
      ),
      [],
    );
    for (const heavy of ['zod', 'yaml', 'better-sqlite3', 'gpt-tokenizer', '@ai-sdk/openai', 'hono'])
      assert.ok(!packages.has(heavy), heavy);
  });

  it('a run on the simulator loads no provider SDK, no SQLite and no queue', () => {
    const out = path.join(tmpDir('skillopt-startup-'), 'run');
    const sets = ['train.num_epochs=1', 'env.n_train=8', 'env.n_val=4', 'env.n_test=4', 'train.batch_size=4'].flatMap(
      (s) => ['--set', s],
    );
    const { own, packages } = loaded(['train', '--config', 'configs/sim/default.yaml', '--out', out, ...sets]);
    assert.ok(own.includes('engine/trainer'), 'it trained');
    for (const sdk of [
      '@ai-sdk/openai',
      '@ai-sdk/azure',
      '@ai-sdk/anthropic',
      '@ai-sdk/openai-compatible',
      'better-sqlite3',
      'bullmq',
      'ioredis',
    ])
      assert.ok(!packages.has(sdk), sdk);
  });
});
