/**
 * docs/library.md's "Adding an environment or a backend", followed as written: its example env and
 * backend are written to a file of their own, registered by importing it, and a small run trains
 * on them with the config the page shows.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { loadConfig, runTraining } from '../src/index.ts';
import { ROOT } from './helpers/cli.ts';
import { tmpDir } from './helpers/tmp.ts';

function block(readme: string, name: string, lang: string): string {
  const found = new RegExp(`<!-- ${name}:start -->\\n\`\`\`${lang}\\n([\\s\\S]*?)\`\`\`\\n<!-- ${name}:end -->`).exec(
    readme,
  );
  if (!found?.[1]) throw new Error(`docs/library.md has no ${name} block`);
  return found[1];
}

describe("docs/library.md's example of an env and a backend of one's own", () => {
  it('registers by import and trains a run on them', async () => {
    const readme = fs.readFileSync(path.join(ROOT, 'docs/library.md'), 'utf8');
    const dir = tmpDir('skillopt-extension-');
    // The package and zod, as an installed project would resolve them.
    const code = block(readme, 'extension-example', 'ts')
      .replace("from 'skillopt'", `from '${pathToFileURL(path.join(ROOT, 'src/index.ts')).href}'`)
      .replace("from 'zod'", `from '${import.meta.resolve('zod')}'`);
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    fs.writeFileSync(path.join(dir, 'my-extensions.ts'), code);
    const config = block(readme, 'extension-config', 'yaml').replace(
      '../_base_/default.yaml',
      path.join(ROOT, 'configs/_base_/default.yaml'),
    );
    fs.writeFileSync(path.join(dir, 'config.yaml'), config);

    await import(pathToFileURL(path.join(dir, 'my-extensions.ts')).href);
    const loaded = loadConfig(path.join(dir, 'config.yaml'), {
      overrides: ['train.num_epochs=1', 'cache.mode=off'],
      environment: {},
    });
    const out = path.join(dir, 'run');
    const outcome = await runTraining({
      loaded,
      outRoot: out,
      configFile: path.join(dir, 'config.yaml'),
      console: false,
    });

    assert.equal(outcome.status, 'finished');
    const results = fs
      .readFileSync(path.join(out, 'test_eval', 'results.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; hard: number; target: string });
    assert.equal(results.length, 8);
    assert.ok(
      results.every((r) => r.hard === 1 && r.target === 'doubler:doubler-1'),
      'the doubler answered every test item right, scored by the env',
    );
    assert.ok(
      results.every((r) => /^n2\d\d$/.test(r.id)),
      "the env's own test items",
    );
  });
});
